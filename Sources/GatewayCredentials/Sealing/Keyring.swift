/// A keyring (docs/protocol.md §7): the first key seals, every key opens, so older keys stay listed
/// after it for rotation. Made from the configured key material (`init(_:)` in GatewayKeys.swift)
/// or, in tests, from keys directly.
public struct Keyring: Sendable {
    /// One named 32-byte key. Printing, debug-printing or dumping it never shows the bytes
    /// (docs/protocol.md §11).
    public struct Key: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// Written into sealed values, never secret.
        public let id: String
        /// The key itself; handed only to the cipher or the MAC.
        public let bytes: [UInt8]

        public init(id: String, bytes: [UInt8]) {
            self.id = id
            self.bytes = bytes
        }

        public var description: String { "key \(id) <redacted \(bytes.count) bytes>" }
        public var debugDescription: String { description }
        public var customMirror: Mirror { Mirror(self, children: ["id": id], displayStyle: .struct) }
    }

    /// Keys in order; never empty.
    public let keys: [Key]

    /// Keys of 32 bytes each (§7), at least one.
    public init(keys: [Key]) {
        precondition(!keys.isEmpty && keys.allSatisfy { $0.bytes.count == 32 })
        self.keys = keys
    }

    /// The key that seals (the first).
    public var sealingKey: Key { keys[0] }

    /// The key named `id`, for opening.
    public func key(id: Substring) -> Key? { keys.first { $0.id.utf8.elementsEqual(id.utf8) } }
}

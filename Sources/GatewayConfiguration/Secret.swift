/// Key material or other secret bytes (keyring keys, the fingerprint key, APNs private keys).
/// Printing, interpolating, debug-printing or dumping it never shows the bytes (docs/protocol.md §11).
public struct SecretBytes: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The secret itself; hand it only to the code that uses it.
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var description: String { "<redacted \(bytes.count) bytes>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// A secret string (the database URL, which may hold a password). Redacted like `SecretBytes`.
public struct SecretText: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The secret itself; hand it only to the code that uses it.
    public let value: String

    public init(_ value: String) {
        self.value = value
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

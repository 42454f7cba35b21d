import PushCrypto

/// A keyring variable as configured, `id:base64(32 bytes),...` (docs/protocol.md §7, §12): its keys
/// in order, each id and each key's bytes distinct. Plain key material: GatewayCredentials'
/// `Keyring` seals with the first and opens with any (docs/decisions/0865).
public struct ConfiguredKeyring: Sendable {
    /// One named 32-byte key.
    public struct Key: Sendable {
        /// 1..32 characters of `[A-Za-z0-9_-]`; written into sealed values, never secret.
        public let id: String
        public let secret: SecretBytes

        public init(id: String, secret: SecretBytes) {
            self.id = id
            self.secret = secret
        }

        /// The key bytes.
        public var bytes: [UInt8] { secret.bytes }
    }

    /// Keys in configured order; never empty.
    public let keys: [Key]

    /// Key bytes length for every keyring key and the fingerprint key.
    public static let keyLength = 32

    /// Whether `id` is a valid key id (docs/protocol.md §7).
    public static func isValidKeyID(_ id: Substring) -> Bool {
        (1...32).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }

    /// Parses the keyring `variable` holds; its problems (naming entry positions, never quoting the
    /// text) when it is invalid.
    public static func parse(_ text: String, variable: String) -> Result<ConfiguredKeyring, ConfigurationError> {
        var problems: [String] = []
        var keys: [Key] = []
        for (index, entry) in text.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let position = "entry \(index + 1)"
            guard let colon = entry.firstIndex(of: ":") else {
                problems.append("\(position) is not id:base64")
                continue
            }
            let id = entry[..<colon]
            guard isValidKeyID(id) else {
                problems.append("\(position): the key id must be 1..32 characters of A-Z a-z 0-9 _ -")
                continue
            }
            guard let bytes = Base64.decode(String(entry[entry.index(after: colon)...])) else {
                problems.append("\(position): the key is not standard base64")
                continue
            }
            guard bytes.count == keyLength else {
                problems.append("\(position): the key must decode to exactly \(keyLength) bytes")
                continue
            }
            if keys.contains(where: { $0.id.utf8.elementsEqual(id.utf8) }) {
                problems.append("\(position): the key id is already used by an earlier entry")
            } else if keys.contains(where: { $0.bytes == bytes }) {
                problems.append("\(position): the key bytes repeat an earlier entry's")
            } else {
                keys.append(Key(id: String(id), secret: SecretBytes(bytes)))
            }
        }
        if !problems.isEmpty {
            return .failure(
                ConfigurationError(
                    .invalidKeyring,
                    problems: problems.map { ConfigurationError.Problem(variable: variable, problem: $0) }))
        }
        return .success(ConfiguredKeyring(keys: keys))
    }

    private init(keys: [Key]) {
        self.keys = keys
    }
}

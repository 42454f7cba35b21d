import PushCrypto
import PushHTTP2
import PushSystem

/// Apple's request checks as `apns-mock` applies them, in Apple's vocabulary ("Handling
/// notification responses from APNs"): a failed check is the status and `reason` to answer.
public struct APNsMockValidator: Sendable {
    public struct Rejection: Sendable, Equatable {
        public let status: Int
        public let reason: String
    }

    /// Decides whether a well-formed JWT is acceptable (e.g. checks its ES256 signature against
    /// the team's public key). Called only after the shape check passed.
    public typealias TokenVerifier = @Sendable (APNsMockJWT) -> Bool

    static let maximumPayload = 4096
    static let pushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity",
        "pushtotalk", "controls", "widgets",
    ]

    /// When true, a request without `authorization` is `403 MissingProviderToken`.
    public var requireProviderToken: Bool
    public var tokenVerifier: TokenVerifier?

    public init(requireProviderToken: Bool = true, tokenVerifier: TokenVerifier? = nil) {
        self.requireProviderToken = requireProviderToken
        self.tokenVerifier = tokenVerifier
    }

    /// Accepts a JWT only when its ES256 signature (raw `r‖s`) over the signing input verifies
    /// with `publicKey`, the public half of the provider's `.p8` key, as Apple does.
    public static func signatureVerifier(_ publicKey: P256PublicKey) -> TokenVerifier {
        { jwt in publicKey.isValidRawSignature(jwt.signature, for: jwt.signingInput) }
    }

    /// Checks one request; `headers` excludes pseudo-headers.
    public func validate(method: String, path: String, headers: [HTTPField], body: [UInt8]) -> Rejection? {
        guard method == "POST" else { return Rejection(status: 405, reason: "MethodNotAllowed") }
        let prefix = "/3/device/"
        guard path.hasPrefix(prefix) || path == "/3/device" else { return Rejection(status: 404, reason: "BadPath") }
        let token = path.dropFirst(prefix.count)
        guard !token.isEmpty else { return Rejection(status: 400, reason: "MissingDeviceToken") }
        guard token.count.isMultiple(of: 2), token.count <= 200, token.utf8.allSatisfy(Self.isLowerOrUpperHex) else {
            return Rejection(status: 400, reason: "BadDeviceToken")
        }
        var seen: [String: String] = [:]
        for header in headers {
            guard seen.updateValue(header.value, forKey: header.name) == nil else {
                return Rejection(status: 400, reason: "DuplicateHeaders")
            }
        }
        if let id = seen["apns-id"], !Self.isUUID(id) { return Rejection(status: 400, reason: "BadMessageId") }
        guard let topic = seen["apns-topic"], !topic.isEmpty else {
            return Rejection(status: 400, reason: "MissingTopic")
        }
        if let type = seen["apns-push-type"], !Self.pushTypes.contains(type) {
            return Rejection(status: 400, reason: "InvalidPushType")
        }
        if let priority = seen["apns-priority"], !["1", "5", "10"].contains(priority) {
            return Rejection(status: 400, reason: "BadPriority")
        }
        if let expiration = seen["apns-expiration"],
            expiration.isEmpty || !expiration.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        {
            return Rejection(status: 400, reason: "BadExpirationDate")
        }
        guard !body.isEmpty else { return Rejection(status: 400, reason: "PayloadEmpty") }
        guard body.count <= Self.maximumPayload else { return Rejection(status: 413, reason: "PayloadTooLarge") }
        if let authorization = seen["authorization"] {
            guard let jwt = APNsMockJWT.parse(authorization: authorization), tokenVerifier?(jwt) ?? true else {
                return Rejection(status: 403, reason: "InvalidProviderToken")
            }
        } else if requireProviderToken {
            return Rejection(status: 403, reason: "MissingProviderToken")
        }
        return nil
    }

    private static func isLowerOrUpperHex(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) || (0x41...0x46).contains(byte)
    }

    // 8-4-4-4-12 hexadecimal digits (Apple: "a canonical UUID").
    private static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else if !isLowerOrUpperHex(byte) {
                return false
            }
        }
        return true
    }
}

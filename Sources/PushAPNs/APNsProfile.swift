import PushCrypto
import PushDelivery
import PushHTTP2

/// Where and as whom the gateway talks to APNs for one app profile (docs/protocol.md §8, §12).
public struct APNsProfile: Sendable {
    /// How the provider authenticates.
    public enum Credential: Sendable {
        /// Token auth: an ES256 JWT from the `.p8` key; `signer` returns raw `r‖s` over its input.
        case token(teamID: String, keyID: String, signer: ProviderTokenCache.Signer)
        /// Certificate auth: a TLS client certificate chain and its unencrypted key (PEM files; the
        /// same path when one file holds both).
        case certificate(certificateFile: String, keyFile: String)

        /// Token auth from the contents of the `.p8` file Apple issues (an unencrypted PKCS#8 PEM
        /// P-256 key); throws when the text is not such a key. The error never contains the key.
        public static func token(
            teamID: String, keyID: String, privateKeyPEM: String
        ) throws(APNsError)
            -> Credential
        {
            let privateKey: P256PrivateKey
            do {
                privateKey = try P256PrivateKey(pem: privateKeyPEM)
            } catch {
                throw APNsError(
                    .invalidProviderKey, description: "the provider key is not an unencrypted PKCS#8 P-256 private key")
            }
            return .token(teamID: teamID, keyID: keyID, signer: ProviderTokenCache.es256Signer(privateKey))
        }
    }

    public let server: APNsServer
    /// The bundle id sent as `apns-topic`.
    public let topic: String
    public let credential: Credential
    /// An extra trust anchor (PEM) for test servers (`PUSH_GATEWAY_APNS_CA_FILE`).
    public let extraTrustAnchorsFile: String?

    /// Identifies the connection pool: environment host plus credential plus trust (§8: one pool
    /// per (environment, credential)). Computed once here rather than on every send.
    let poolIdentity: String

    public init(server: APNsServer, topic: String, credential: Credential, extraTrustAnchorsFile: String? = nil) {
        self.server = server
        self.topic = topic
        self.credential = credential
        self.extraTrustAnchorsFile = extraTrustAnchorsFile
        let trust = extraTrustAnchorsFile ?? ""
        switch credential {
        case .token(let teamID, let keyID, _): poolIdentity = "token|\(teamID)|\(keyID)|\(trust)"
        case .certificate(let certificateFile, let keyFile):
            poolIdentity = "certificate|\(certificateFile)|\(keyFile)|\(trust)"
        }
    }
}

/// Tags ``HTTP2Server`` as an APNs host.
public enum APNsService {}

/// An APNs host and port.
public typealias APNsServer = HTTP2Server<APNsService>

extension HTTP2Server where Service == APNsService {
    public static var production: APNsServer { APNsServer(host: "api.push.apple.com") }
    public static var sandbox: APNsServer { APNsServer(host: "api.sandbox.push.apple.com") }
}

/// One wake-up notification to send.
public struct APNsNotification: Sendable {
    /// The raw APNs device token (sent as lowercase hex in the path).
    public let deviceToken: [UInt8]
    /// Sent as `apns-id` (a canonical UUID); nil sends no `apns-id` and APNs assigns one.
    public let requestID: String?
    /// Unix seconds, sent as `apns-expiration`.
    public let expiresAt: Int64
    /// A relay's alert wake (docs/protocol.md §8) or a Marmot background wake (§13 step 7).
    public let style: WakeStyle

    public init(deviceToken: [UInt8], requestID: String?, expiresAt: Int64, style: WakeStyle = .reconnect) {
        self.deviceToken = deviceToken
        self.requestID = requestID
        self.expiresAt = expiresAt
        self.style = style
    }
}

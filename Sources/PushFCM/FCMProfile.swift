/// A host and port the FCM client talks to over TLS + HTTP/2.
public struct FCMServer: Sendable, Hashable {
    public let host: String
    public let port: UInt16

    public init(host: String, port: UInt16 = 443) {
        self.host = host
        self.port = port
    }

    /// FCM HTTP v1 (docs/protocol.md §8a).
    public static let production = FCMServer(host: "fcm.googleapis.com")
    /// Google's OAuth token endpoint, always this one outside tests (§8a ignores the file's `token_uri`).
    public static let googleTokenEndpoint = FCMServer(host: "oauth2.googleapis.com")
}

/// Where and as whom the gateway sends FCM messages for one android profile (docs/protocol.md §8a).
public struct FCMProfile: Sendable {
    public let projectID: String
    public let account: ServiceAccount
    public let server: FCMServer
    public let tokenEndpoint: FCMServer
    /// The token endpoint's path (`/token` at Google).
    public let tokenPath: String
    /// An extra trust anchor (PEM) for test servers (`PUSH_GATEWAY_FCM_CA_FILE`).
    public let extraTrustAnchorsFile: String?
    /// One connection pool and one access token per credential (§8a).
    let credentialID: String

    public init(
        projectID: String, account: ServiceAccount, server: FCMServer = .production,
        tokenEndpoint: FCMServer = .googleTokenEndpoint, tokenPath: String = "/token",
        extraTrustAnchorsFile: String? = nil
    ) {
        self.projectID = projectID
        self.account = account
        self.server = server
        self.tokenEndpoint = tokenEndpoint
        self.tokenPath = tokenPath
        self.extraTrustAnchorsFile = extraTrustAnchorsFile
        credentialID =
            "fcm|\(account.clientEmail)|\(account.privateKeyID)|\(tokenEndpoint.host):\(tokenEndpoint.port)|"
            + (extraTrustAnchorsFile ?? "")
    }
}

/// One wake-up: the registration token and the relay's `expires_at` (Unix seconds).
public struct FCMMessage: Sendable {
    public let registrationToken: String
    public let expiresAt: Int64

    public init(registrationToken: String, expiresAt: Int64) {
        self.registrationToken = registrationToken
        self.expiresAt = expiresAt
    }
}

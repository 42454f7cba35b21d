import PushHTTP2

/// Tags ``HTTP2Server`` as an FCM host (the FCM API or Google's OAuth token endpoint).
public enum FCMService {}

/// A host and port the FCM client talks to over TLS + HTTP/2.
public typealias FCMServer = HTTP2Server<FCMService>

extension HTTP2Server where Service == FCMService {
    /// FCM HTTP v1 (docs/protocol.md §8a).
    public static var production: FCMServer { FCMServer(host: "fcm.googleapis.com") }
    /// Google's OAuth token endpoint, always this one outside tests (§8a ignores the file's `token_uri`).
    public static var googleTokenEndpoint: FCMServer { FCMServer(host: "oauth2.googleapis.com") }
}

/// Where and as whom the gateway sends FCM messages for one android profile (docs/protocol.md §8a).
/// A class: each send captures its profile several times, and a reference is one retain where the
/// struct's dozen strings were a dozen.
public final class FCMProfile: Sendable {
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

/// One wake-up: the registration token and how long FCM may hold the message.
public struct FCMMessage: Sendable, Equatable {
    /// The §8a `ttl` before clamping to 0...2419200.
    public enum TimeToLive: Sendable, Equatable {
        /// Until the relay's `expires_at` (Unix seconds): docs/protocol.md §4.7.
        case until(Int64)
        /// A fixed lifetime in seconds: a Marmot trigger's 3600 (docs/protocol.md §13 step 7).
        case fixed(Int64)

        func seconds(now: Int64) -> Int64 {
            switch self {
            case .until(let expiresAt): expiresAt - now
            case .fixed(let seconds): seconds
            }
        }
    }

    public let registrationToken: String
    public let timeToLive: TimeToLive

    public init(registrationToken: String, timeToLive: TimeToLive) {
        self.registrationToken = registrationToken
        self.timeToLive = timeToLive
    }

    public init(registrationToken: String, expiresAt: Int64) {
        self.init(registrationToken: registrationToken, timeToLive: .until(expiresAt))
    }
}

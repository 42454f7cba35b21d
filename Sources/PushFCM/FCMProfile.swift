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

/// Where the FCM client reaches Google (docs/protocol.md §8a): the send API and the OAuth token
/// endpoint, and the trust anchor a test server adds. Google's hosts unless the test variables of
/// §12 point elsewhere; they move together, so a profile holds one value for all of them.
public struct FCMHosts: Sendable {
    public let server: FCMServer
    public let tokenEndpoint: FCMServer
    /// The token endpoint's path (`/token` at Google).
    public let tokenPath: String
    /// An extra trust anchor (PEM) for test servers (`PUSH_GATEWAY_FCM_CA_FILE`).
    public let extraTrustAnchorsFile: String?

    /// Google's: FCM HTTP v1 and `oauth2.googleapis.com/token`, the system's trust anchors.
    public static let google = FCMHosts(
        server: .production, tokenEndpoint: .googleTokenEndpoint, tokenPath: "/token", extraTrustAnchorsFile: nil)

    /// Google's hosts, each replaced where the test variables set one (`nil` keeps Google's).
    public static func google(
        replacingServer server: FCMServer?, tokenEndpoint: FCMServer?, tokenPath: String?,
        extraTrustAnchorsFile: String?
    ) -> FCMHosts {
        FCMHosts(
            server: server ?? google.server, tokenEndpoint: tokenEndpoint ?? google.tokenEndpoint,
            tokenPath: tokenPath ?? google.tokenPath, extraTrustAnchorsFile: extraTrustAnchorsFile)
    }

    /// One local server that answers both endpoints (fcm-mock), its certificate trusted through `caFile`.
    public static func local(_ server: FCMServer, caFile: String) -> FCMHosts {
        google(replacingServer: server, tokenEndpoint: server, tokenPath: nil, extraTrustAnchorsFile: caFile)
    }
}

/// Where and as whom the gateway sends FCM messages for one android profile (docs/protocol.md §8a).
/// A class: each send captures its profile several times, and a reference is one retain where the
/// struct's dozen strings were a dozen.
public final class FCMProfile: Sendable {
    public let projectID: String
    public let account: ServiceAccount
    public let hosts: FCMHosts
    /// One connection pool and one access token per credential (§8a).
    let credentialID: String

    public init(projectID: String, account: ServiceAccount, hosts: FCMHosts = .google) {
        self.projectID = projectID
        self.account = account
        self.hosts = hosts
        credentialID =
            "fcm|\(account.clientEmail)|\(account.privateKeyID)|\(hosts.tokenEndpoint.host):\(hosts.tokenEndpoint.port)|"
            + (hosts.extraTrustAnchorsFile ?? "")
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

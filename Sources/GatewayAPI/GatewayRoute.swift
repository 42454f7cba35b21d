import GatewayConfiguration
import PushAttest
import PushHTTP
import PushMetrics

/// Every route of the gateway, declared once (docs/protocol.md §1, §4, §9): the router, the request
/// metrics and the access log all read this table, and its raw value is the route's label in
/// both. Adding a route is one case here and one handler in `GatewayApplication.route(for:)`;
/// the compiler asks for both. A route may answer on several paths (docs/protocol.md §4.7, §4.8: two
/// paths, one route); it keeps one label on all of them (docs/decisions/0430).
public enum GatewayRoute: String, MetricLabel {
    case challenges
    case deliveries
    case batchDeliveries = "batch_deliveries"
    case enroll
    case enrollAndroid = "enroll_android"
    case delegate
    case rotateEndpoint = "rotate_endpoint"
    case revokeDelegation = "revoke_delegation"
    case revokeInstallation = "revoke_installation"
    case liveness
    case readiness
    case metrics

    /// Where a handler runs.
    public enum Execution: Sendable {
        /// On the event loop: only for handlers that never block and take microseconds.
        case eventLoop
        /// On a worker thread; may block on PostgreSQL or APNs.
        case worker
    }

    /// What the router needs to know of a route besides its handler.
    public struct Declaration: Sendable, Equatable {
        public let listener: HTTPListener
        public let method: String
        /// The first is the route's original path; every path runs the same handler.
        public let paths: [String]
        /// docs/protocol.md §1: 8192 bytes unless the route says otherwise.
        public let bodyLimit: Int
        /// Requires `Content-Type: application/json`.
        public let requiresJSON: Bool
        public let execution: Execution

        init(
            _ listener: HTTPListener, _ method: String, _ paths: String..., bodyLimit: Int = Router.defaultBodyLimit,
            execution: Execution = .worker
        ) {
            self.listener = listener
            self.method = method
            self.paths = paths
            self.bodyLimit = bodyLimit
            // Every public route takes a JSON body; the private probes take none.
            self.requiresJSON = listener == .publicListener
            self.execution = execution
        }
    }

    /// docs/protocol.md §1: the enrollment body carries an attestation of up to 16 KiB.
    static let enrollBodyLimit = 23896
    /// docs/protocol.md §1: the Android enrollment body carries a chain of up to ten certificates.
    static let enrollAndroidBodyLimit = 32768

    public var declaration: Declaration {
        switch self {
        // Challenge issuance never blocks (HMAC, randomness and an in-memory bucket).
        case .challenges: Declaration(.publicListener, "POST", "/v1/installations/challenges", execution: .eventLoop)
        case .deliveries: Declaration(.publicListener, "POST", Self.apnsDeliveryPath, "/v1/deliveries")
        case .batchDeliveries:
            Declaration(
                .publicListener, "POST", Self.apnsBatchDeliveryPath, "/v1/deliveries/batch",
                bodyLimit: BatchDeliveryRequest.bodyLimit)
        // The App Attest paths are part of the signed transcript, so PushAttest holds them.
        case .enroll:
            Declaration(
                .publicListener, "POST", AppAttestTranscript.Route.enroll.path, bodyLimit: Self.enrollBodyLimit)
        case .enrollAndroid:
            Declaration(
                .publicListener, "POST", AndroidEnrollmentTranscript.path, bodyLimit: Self.enrollAndroidBodyLimit)
        case .delegate: Declaration(.publicListener, "POST", AppAttestTranscript.Route.delegate.path)
        case .rotateEndpoint: Declaration(.publicListener, "POST", AppAttestTranscript.Route.rotateEndpoint.path)
        case .revokeDelegation: Declaration(.publicListener, "POST", AppAttestTranscript.Route.revokeDelegation.path)
        case .revokeInstallation:
            Declaration(.publicListener, "POST", AppAttestTranscript.Route.revokeInstallation.path)
        case .liveness: Declaration(.privateListener, "GET", "/_liveness", execution: .eventLoop)
        case .readiness: Declaration(.privateListener, "GET", "/_readiness")
        // Rendering reads counters and /proc in memory: no reason to cross to a worker and back.
        case .metrics: Declaration(.privateListener, "GET", "/metrics", execution: .eventLoop)
        }
    }

    static let apnsDeliveryPath = "/v1/deliveries/apns"
    static let apnsBatchDeliveryPath = "/v1/deliveries/apns/batch"

    /// The route's original path (for the delivery routes, the `/apns` one).
    public var path: String { declaration.paths[0] }

    /// docs/protocol.md §4.7, §4.8: the platform a delivery path requires of a grant's profile; nil
    /// on the platform-neutral paths.
    package static func requiredPlatform(onPath path: String) -> AppProfile.Platform? {
        path == apnsDeliveryPath || path == apnsBatchDeliveryPath ? .ios : nil
    }

    /// The routes one listener serves.
    public static func served(by listener: HTTPListener) -> [GatewayRoute] {
        allCases.filter { $0.declaration.listener == listener }
    }

    /// The router's entries for this route, one per path, with its handler.
    package func routes(handler: @escaping @Sendable (Request) -> Response) -> [Route] {
        routes(handlerOnPath: { _ in handler })
    }

    /// The router's entries for this route, one per path, each with the handler made for its path.
    package func routes(handlerOnPath handler: (String) -> @Sendable (Request) -> Response) -> [Route] {
        let declaration = declaration
        return declaration.paths.map { path in
            Route(
                declaration.method, path, label: rawValue, bodyLimit: declaration.bodyLimit,
                requiresJSON: declaration.requiresJSON, runsOnEventLoop: declaration.execution == .eventLoop,
                handler: handler(path))
        }
    }

    /// The router's entries for this route, one per path, each with the deferred handler made for its
    /// path (docs/decisions/0270).
    package func routes(deferredOnPath handler: (String) -> @Sendable (Request, Responder) -> Void) -> [Route] {
        let declaration = declaration
        return declaration.paths.map { path in
            Route(
                declaration.method, path, label: rawValue, bodyLimit: declaration.bodyLimit,
                requiresJSON: declaration.requiresJSON, deferred: handler(path))
        }
    }
}

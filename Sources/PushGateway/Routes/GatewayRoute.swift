import PushAttest
import PushHTTP
import PushMetrics

/// Every route of the gateway, declared once (docs/protocol.md §1, §4, §9): the router, the request
/// metrics and the access log all read this table, and its raw value is the route's label in
/// both. Adding a route is one case here and one handler in `GatewayApplication.route(for:)`;
/// the compiler asks for both.
public enum GatewayRoute: String, MetricLabel {
    case challenges
    case deliveries
    case batchDeliveries = "batch_deliveries"
    case enroll
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
        public let path: String
        /// docs/protocol.md §1: 8192 bytes unless the route says otherwise.
        public let bodyLimit: Int
        /// Requires `Content-Type: application/json`.
        public let requiresJSON: Bool
        public let execution: Execution

        init(
            _ listener: HTTPListener, _ method: String, _ path: String, bodyLimit: Int = Router.defaultBodyLimit,
            execution: Execution = .worker
        ) {
            self.listener = listener
            self.method = method
            self.path = path
            self.bodyLimit = bodyLimit
            // Every public route takes a JSON body; the private probes take none.
            self.requiresJSON = listener == .publicListener
            self.execution = execution
        }
    }

    /// docs/protocol.md §1: the enrollment body carries an attestation of up to 16 KiB.
    static let enrollBodyLimit = 23896

    public var declaration: Declaration {
        switch self {
        // Challenge issuance never blocks (HMAC, randomness and an in-memory bucket).
        case .challenges: Declaration(.publicListener, "POST", "/v1/installations/challenges", execution: .eventLoop)
        case .deliveries: Declaration(.publicListener, "POST", "/v1/deliveries/apns")
        case .batchDeliveries:
            Declaration(
                .publicListener, "POST", "/v1/deliveries/apns/batch", bodyLimit: BatchDeliveryRequest.bodyLimit)
        // The App Attest paths are part of the signed transcript, so PushAttest holds them.
        case .enroll:
            Declaration(
                .publicListener, "POST", AppAttestTranscript.Route.enroll.path, bodyLimit: Self.enrollBodyLimit)
        case .delegate: Declaration(.publicListener, "POST", AppAttestTranscript.Route.delegate.path)
        case .rotateEndpoint: Declaration(.publicListener, "POST", AppAttestTranscript.Route.rotateEndpoint.path)
        case .revokeDelegation: Declaration(.publicListener, "POST", AppAttestTranscript.Route.revokeDelegation.path)
        case .revokeInstallation:
            Declaration(.publicListener, "POST", AppAttestTranscript.Route.revokeInstallation.path)
        case .liveness: Declaration(.privateListener, "GET", "/_liveness", execution: .eventLoop)
        case .readiness: Declaration(.privateListener, "GET", "/_readiness")
        case .metrics: Declaration(.privateListener, "GET", "/metrics")
        }
    }

    public var path: String { declaration.path }

    /// The routes one listener serves.
    public static func served(by listener: HTTPListener) -> [GatewayRoute] {
        allCases.filter { $0.declaration.listener == listener }
    }

    /// The router's entry for this route with its handler.
    func route(handler: @escaping @Sendable (Request) -> Response) -> Route {
        let declaration = declaration
        return Route(
            declaration.method, declaration.path, label: rawValue, bodyLimit: declaration.bodyLimit,
            requiresJSON: declaration.requiresJSON, runsOnEventLoop: declaration.execution == .eventLoop,
            handler: handler)
    }

    /// The router's entry for this route with a deferred handler (docs/decisions/0270).
    func route(deferred handler: @escaping @Sendable (Request, Responder) -> Void) -> Route {
        Route(
            declaration.method, declaration.path, label: rawValue, bodyLimit: declaration.bodyLimit,
            requiresJSON: declaration.requiresJSON, deferred: handler)
    }
}

import GatewayAPI
import GatewayConfiguration
import GatewayMetrics
import PushHTTP
import PushSystem

/// The two listeners of a running gateway (docs/protocol.md §9): public routes and private probes.
public final class GatewayServer: Sendable {
    public let application: GatewayApplication
    let publicServer: HTTPServer
    let privateServer: HTTPServer

    /// Binds both listeners (a bad address or a port in use fails here) without accepting yet.
    /// `publicListen`/`privateListen` override the configured addresses (tests bind port 0).
    public init(
        application: GatewayApplication, publicListen: String? = nil, privateListen: String? = nil,
        tuning: (inout HTTPServerConfiguration) -> Void = { _ in }
    ) throws(GatewayError) {
        self.application = application
        var publicConfiguration = HTTPServerConfiguration(
            listen: publicListen ?? application.configuration.listen.description)
        // The listener's loops and workers are the application's runtime, sized from
        // `PUSH_GATEWAY_EVENT_LOOPS` and `PUSH_GATEWAY_WORKERS` (docs/decisions/0870).
        publicConfiguration.workerCount = application.configuration.workerCount
        publicConfiguration.eventLoopCount = application.configuration.eventLoopCount
        publicConfiguration.maxConnections = application.configuration.maxConnections
        publicConfiguration.maxConnectionsPerPeer = application.configuration.maxConnectionsPerPeer
        let trustedProxies = application.configuration.trustedProxies
        publicConfiguration.isExemptFromPeerLimit = { peer in
            trustedProxies.contains(IPAddressLiteral.parse(peer[...]) ?? [])
        }
        tuning(&publicConfiguration)
        var privateConfiguration = HTTPServerConfiguration(
            listen: privateListen ?? application.configuration.healthListen.description)
        privateConfiguration.maxConnections = 64
        privateConfiguration.maxQueuedRequests = 32
        let publicRoutes = application.routes(on: .publicListener)
        let privateRoutes = application.routes(on: .privateListener)
        let publicRecorder = application.metrics.registerRoutes(
            listener: .publicListener, labels: publicRoutes.map(\.label))
        let privateRecorder = application.metrics.registerRoutes(
            listener: .privateListener, labels: privateRoutes.map(\.label))
        publicServer = try Self.bind(
            .publicListener, publicConfiguration, Router(publicRoutes),
            Self.accessLog(publicRecorder, application.logger), application)
        privateServer = try Self.bind(
            .privateListener, privateConfiguration, Router(privateRoutes),
            Self.accessLog(privateRecorder, application.logger), application)
        // Weak: the servers' access-log hooks already hold the metrics.
        let publicServer = publicServer
        let privateServer = privateServer
        application.metrics.registerListener(
            .publicListener, queuedRequests: { [weak publicServer] in publicServer?.queuedRequestCount ?? 0 },
            openConnections: { [weak publicServer] in publicServer?.openConnectionCount ?? 0 })
        application.metrics.registerListener(
            .privateListener, queuedRequests: { [weak privateServer] in privateServer?.queuedRequestCount ?? 0 },
            openConnections: { [weak privateServer] in privateServer?.openConnectionCount ?? 0 })
    }

    private static func bind(
        _ listener: HTTPListener, _ configuration: HTTPServerConfiguration, _ router: Router,
        _ accessLog: @escaping HTTPServer.AccessLog, _ application: GatewayApplication
    ) throws(GatewayError) -> HTTPServer {
        do {
            return try HTTPServer(
                configuration: configuration, router: router, logger: application.logger, accessLog: accessLog,
                runtime: application.runtime)
        } catch {
            throw .listener(listener, address: configuration.listen, underlying: error)
        }
    }

    /// One JSON access-log line per response (route, method, status, duration: docs/protocol.md §11)
    /// and the request metrics, both under the route's label from `GatewayRoute`.
    private static func accessLog(_ recorder: RequestRecorder, _ logger: Logger) -> HTTPServer.AccessLog {
        return { entry in
            HTTPServer.log(entry, to: logger)
            recorder.record(
                route: entry.route, status: entry.status, durationSeconds: entry.durationMilliseconds / 1000)
        }
    }

    public var publicPort: Int { publicServer.port }
    public var privatePort: Int { privateServer.port }

    public func start() throws(GatewayError) {
        do {
            try privateServer.start()
        } catch {
            throw .listener(.privateListener, address: privateServer.configuration.listen, underlying: error)
        }
        do {
            try publicServer.start()
        } catch {
            throw .listener(.publicListener, address: publicServer.configuration.listen, underlying: error)
        }
    }

    /// Graceful shutdown (docs/protocol.md §9): readiness fails at once, the public listener stops
    /// accepting and closes idle connections, in-flight requests finish (≤ 30 s), then the private
    /// listener, which kept answering readiness with 503 meanwhile, closes too.
    public func drain() {
        application.beginDrain()
        publicServer.beginDrain()
        publicServer.waitUntilDrained()
        privateServer.beginDrain(timeout: .seconds(1))
        privateServer.waitUntilDrained()
    }
}

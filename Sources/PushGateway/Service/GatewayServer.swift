import PushHTTP
import PushSystem

/// The two listeners of a running gateway (PROTOCOL.md §9): public routes and private probes.
public final class GatewayServer: Sendable {
    public let application: GatewayApplication
    let publicServer: HTTPServer
    let privateServer: HTTPServer

    /// Binds both listeners (a bad address or a port in use fails here) without accepting yet.
    /// `publicListen`/`privateListen` override the configured addresses (tests bind port 0).
    public init(
        application: GatewayApplication, publicListen: String? = nil, privateListen: String? = nil,
        tuning: (inout HTTPServerConfiguration) -> Void = { _ in }
    ) throws(HTTPServerError) {
        self.application = application
        var publicConfiguration = HTTPServerConfiguration(
            listen: publicListen ?? application.configuration.listen.description)
        // Handlers block on PostgreSQL and APNs, so workers beyond the database pool wait for a
        // session; the operator sizes both (PROTOCOL.md §12).
        publicConfiguration.workerCount = application.configuration.workerCount
        publicConfiguration.maxConnections = application.configuration.maxConnections
        tuning(&publicConfiguration)
        var privateConfiguration = HTTPServerConfiguration(
            listen: privateListen ?? application.configuration.healthListen.description)
        privateConfiguration.workerCount = 2
        privateConfiguration.maxConnections = 64
        privateConfiguration.maxQueuedRequests = 32
        let publicRoutes = application.publicRoutes()
        let privateRoutes = application.privateRoutes()
        let publicRecorder = application.metrics.registerRoutes(
            listener: .publicListener, labels: publicRoutes.map(\.label))
        let privateRecorder = application.metrics.registerRoutes(
            listener: .privateListener, labels: privateRoutes.map(\.label))
        publicServer = try HTTPServer(
            configuration: publicConfiguration, router: Router(publicRoutes), logger: application.logger,
            accessLog: Self.accessLog(.publicListener, publicRecorder, application))
        privateServer = try HTTPServer(
            configuration: privateConfiguration, router: Router(privateRoutes), logger: application.logger,
            accessLog: Self.accessLog(.privateListener, privateRecorder, application))
        // Weak: the servers' access-log hooks already hold the metrics.
        let publicServer = publicServer
        let privateServer = privateServer
        application.metrics.registerQueue(listener: .publicListener) { [weak publicServer] in
            publicServer?.queuedRequestCount ?? 0
        }
        application.metrics.registerQueue(listener: .privateListener) { [weak privateServer] in
            privateServer?.queuedRequestCount ?? 0
        }
    }

    /// One JSON access-log line per response (route, method, status, duration: PROTOCOL.md §11)
    /// and the request metrics. A 429 on the challenge route can only come from its per-source
    /// bucket, so it is counted as a challenge rate-limit rejection here.
    private static func accessLog(
        _ listener: HTTPListener, _ recorder: RequestRecorder, _ application: GatewayApplication
    ) -> HTTPServer.AccessLog {
        let logger = application.logger
        let metrics = application.metrics
        return { entry in
            // Checked first so that a disabled access log does not build its fields on every request.
            if logger.isEnabled(.info) {
                logger.info(
                    "request",
                    [
                        "route": .string(entry.route), "method": .string(entry.method),
                        "status": .int(Int64(entry.status)),
                        "duration_ms": .double((entry.durationMilliseconds * 1000).rounded() / 1000),
                    ])
            }
            recorder.record(
                route: entry.route, status: entry.status, durationSeconds: entry.durationMilliseconds / 1000)
            // The status first: comparing it is cheaper than comparing the route label.
            if entry.status == 429 && listener == .publicListener && entry.route == GatewayApplication.challengesLabel {
                metrics.recordChallengeRateLimited()
            }
        }
    }

    public var publicPort: Int { publicServer.port }
    public var privatePort: Int { privateServer.port }

    public func start() throws(HTTPServerError) {
        try privateServer.start()
        try publicServer.start()
    }

    /// Graceful shutdown (PROTOCOL.md §9): readiness fails at once, the public listener stops
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

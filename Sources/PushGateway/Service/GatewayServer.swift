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
        // Handlers block on PostgreSQL and APNs; more workers than the database pool only queue there.
        publicConfiguration.workerCount = 32
        tuning(&publicConfiguration)
        var privateConfiguration = HTTPServerConfiguration(
            listen: privateListen ?? application.configuration.healthListen.description)
        privateConfiguration.workerCount = 2
        privateConfiguration.maxConnections = 64
        privateConfiguration.maxQueuedRequests = 32
        publicServer = try HTTPServer(
            configuration: publicConfiguration, router: application.publicRouter(), logger: application.logger)
        privateServer = try HTTPServer(
            configuration: privateConfiguration, router: application.privateRouter(), logger: application.logger)
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

import GatewayConfiguration
import PushDelivery
import PushGateway
import PushHTTP
import PushSystem

/// The one gateway tests run inside their own process: `GatewayServer` with both listeners on
/// ephemeral loopback ports, configured from a `ConfigurationTestEnvironment` (or a given
/// configuration), optionally on a `MigratedTestDatabase`. Drained at deinit, and then the
/// database, if it has one, is dropped.
public final class TestGateway {
    /// Where the gateway's `DATABASE_URL` points.
    public enum Database {
        /// Nothing listens there: for probes and routes that answer without a database.
        case unreachable
        /// A database the test prepared itself.
        case url(String)
        /// A migrated database, reached as its runtime role (through its pooler, if any); the gateway
        /// holds it until its own deinit.
        case migrated(MigratedTestDatabase)
    }

    public static let unreachableDatabaseURL = "postgresql://nobody@127.0.0.1:1/none"

    public let server: GatewayServer
    /// The database of `.migrated`, or the one handed to `init(configuration:database:…)`.
    public let database: MigratedTestDatabase?

    public var application: GatewayApplication { server.application }
    public var configuration: GatewayConfiguration { server.application.configuration }
    public var publicPort: Int { server.publicPort }
    public var privatePort: Int { server.privatePort }

    /// A gateway for `configuration`. `listening: false` binds both ports without serving, for
    /// tests that only look at how the gateway was put together. `overcommitModePath` stands in for
    /// `/proc/sys/vm/overcommit_memory`. `runtime` is the one `providers` were built on, if any
    /// (docs/decisions/0870); by default one is made for `configuration`.
    public init(
        configuration: GatewayConfiguration, database: MigratedTestDatabase? = nil, runtime: Runtime? = nil,
        providers: [String: any PushProvider] = [:], modules: PushProviderModules = .standard,
        clock: any WallClock = SystemWallClock(), logger: Logger = TestLogs.logger(), listening: Bool = true,
        overcommitModePath: String = AddressSpaceFacts.overcommitModePath,
        tuning: (inout HTTPServerConfiguration) -> Void = { _ in }
    ) throws {
        self.database = database
        server = try GatewayServer(
            application: GatewayApplication(
                configuration: configuration, logger: logger,
                runtime: try runtime ?? Self.runtime(configuration, tuning),
                clock: clock, providers: providers, modules: modules, overcommitModePath: overcommitModePath),
            publicListen: "127.0.0.1:0", privateListen: "127.0.0.1:0", tuning: tuning)
        if listening {
            try server.start()
            // As `serve` starts it beside the listeners (docs/decisions/0813).
            application.statusListFetcher?.start()
        }
    }

    /// The runtime `serve` would make, except that a test tuning the public listener's loops or
    /// workers gets exactly those (a test of one worker queues behind it).
    static func runtime(
        _ configuration: GatewayConfiguration, _ tuning: (inout HTTPServerConfiguration) -> Void
    ) throws -> Runtime {
        var untuned = HTTPServerConfiguration(listen: "127.0.0.1:0")
        untuned.eventLoopCount = configuration.eventLoopCount
        untuned.workerCount = configuration.workerCount
        var tuned = untuned
        tuning(&tuned)
        guard tuned.eventLoopCount != untuned.eventLoopCount || tuned.workerCount != untuned.workerCount else {
            return try GatewayApplication.makeRuntime(configuration)
        }
        return try Runtime(
            loopCount: tuned.eventLoopCount, workerCount: tuned.workerCount,
            queueCapacity: GatewayApplication.runtimeQueueCapacity)
    }

    /// A gateway configured by `ConfigurationTestEnvironment` with `DATABASE_URL` set for
    /// `database`, then changed by `adjust`; `providers` are built from the final configuration.
    public convenience init(
        database: Database = .unreachable, providers: ProviderFactory = .none, clock: any WallClock = SystemWallClock(),
        logger: Logger = TestLogs.logger(), listening: Bool = true,
        overcommitModePath: String = AddressSpaceFacts.overcommitModePath,
        _ adjust: (ConfigurationTestEnvironment) throws -> ConfigurationTestEnvironment = { $0 },
        tuning: (inout HTTPServerConfiguration) -> Void = { _ in }
    ) throws {
        let migrated: MigratedTestDatabase?
        let databaseURL: String
        switch database {
        case .unreachable: (migrated, databaseURL) = (nil, Self.unreachableDatabaseURL)
        case .url(let url): (migrated, databaseURL) = (nil, url)
        case .migrated(let database): (migrated, databaseURL) = (database, database.runtimeURL)
        }
        let environment = try adjust(try ConfigurationTestEnvironment().with("DATABASE_URL", databaseURL))
        let configuration = try GatewayConfiguration(environment: environment.variables)
        let runtime = try Self.runtime(configuration, tuning)
        let made: [String: any PushProvider]
        do {
            made = try providers.make(configuration, runtime)
        } catch {
            runtime.shutdown()
            throw error
        }
        try self.init(
            configuration: configuration, database: migrated, runtime: runtime, providers: made,
            modules: providers.modules, clock: clock,
            logger: logger, listening: listening, overcommitModePath: overcommitModePath, tuning: tuning)
    }

    deinit {
        application.statusListFetcher?.stop()
        server.drain()
        application.runtime.shutdown()
    }

    /// Fresh connections to the public listener.
    public var publicListener: TestGatewayClient { TestGatewayClient(port: publicPort) }
    /// Fresh connections to the private listener (probes, metrics).
    public var privateListener: TestGatewayClient { TestGatewayClient(port: privatePort) }

    /// A raw connection to the public listener.
    public func client(timeout: Duration = .seconds(5)) throws -> HTTPTestClient {
        try HTTPTestClient(port: publicPort, timeout: timeout)
    }

    /// `GET path` on the private listener.
    public func get(_ path: String) throws -> HTTPTestResponse { try privateListener.get(path) }

    /// `POST path` on the public listener; see `TestGatewayClient.post`.
    public func post(
        _ path: String, _ body: String, headers: String = "", contentType: String = "application/json"
    ) throws -> HTTPTestResponse {
        try publicListener.post(path, body, headers: headers, contentType: contentType)
    }
}

/// One request per fresh connection to a listener of a test gateway; Sendable, so threads share it.
public struct TestGatewayClient: Sendable {
    public let port: Int

    public init(port: Int) { self.port = port }

    /// `GET path` as a probe or a scraper sends it.
    public func get(_ path: String) throws -> HTTPTestResponse {
        let client = try HTTPTestClient(port: port)
        try client.send("GET \(path) HTTP/1.1\r\nHost: gateway\r\n\r\n")
        return try client.readResponse()
    }

    /// `POST path` with `body` as an app sends it; `headers` are extra lines, each ending in CRLF.
    public func post(
        _ path: String, _ body: String, headers: String = "", contentType: String = "application/json"
    ) throws -> HTTPTestResponse {
        let client = try HTTPTestClient(port: port)
        try client.send(
            "POST \(path) HTTP/1.1\r\nHost: push.buzz.xyz\r\nContent-Type: \(contentType)\r\n\(headers)"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
        return try client.readResponse()
    }
}

/// Builds the gateway's push providers from its final configuration, on the runtime the gateway
/// then runs on (docs/decisions/0870). A struct, not a bare closure, so a trailing closure at the
/// call site still means the environment adjustment.
public struct ProviderFactory {
    public let make: (GatewayConfiguration, Runtime) throws -> [String: any PushProvider]
    /// The provider modules the gateway registers (docs/decisions/0770).
    public let modules: PushProviderModules

    public init(
        modules: PushProviderModules = .standard,
        make: @escaping (GatewayConfiguration, Runtime) throws -> [String: any PushProvider]
    ) {
        self.modules = modules
        self.make = make
    }

    /// No provider: every delivery answers `configuration_fault` (missing credentials).
    public static var none: ProviderFactory { ProviderFactory { _, _ in [:] } }

    /// What `serve` builds: the APNs provider of every iOS profile.
    public static var configured: ProviderFactory { registering(.standard) }

    /// What `serve` builds with `modules` registered instead of the standard list.
    public static func registering(_ modules: PushProviderModules) -> ProviderFactory {
        ProviderFactory(modules: modules) { try PushProviders.make(configuration: $0, modules: modules, runtime: $1) }
    }

    /// `provider` for every enabled profile.
    public static func every(_ provider: any PushProvider) -> ProviderFactory {
        ProviderFactory { configuration, _ in
            Dictionary(uniqueKeysWithValues: configuration.profiles.map { ($0.id, provider) })
        }
    }
}

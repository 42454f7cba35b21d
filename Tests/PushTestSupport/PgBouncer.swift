import Foundation
import Glibc
import PushPostgres

/// A real pgbouncer (Debian's `pgbouncer` package) in transaction pooling mode in front of one
/// database of the test server, with a server pool smaller than the gateway's so its server
/// connections are really shared between client sessions (docs/protocol.md §12). Stopped (and its files
/// removed) by `stop()` or at deinit.
public final class PgBouncer {
    /// The loopback port pgbouncer listens on.
    public let port: Int
    /// Server connections per (database, user) pair.
    public let poolSize: Int
    private let upstream: PostgresURL
    private let directory: URL
    private let process: Process

    /// Starts pgbouncer for the database and role that `url` names (a `postgresql://user:password@
    /// host:port/database` URI of the test server, which trusts loopback logins), and waits until a
    /// session through it answers.
    public init(fronting url: String, poolSize: Int = 4) throws {
        guard let upstream = PostgresURL(url), let userInfo = upstream.userInfo,
            let colon = upstream.hostAndPort.lastIndex(of: ":")
        else { throw TestSupportError("pgbouncer needs a postgresql://user@host:port/database URI") }
        self.upstream = upstream
        self.poolSize = poolSize
        port = try freeLoopbackPort()
        let user = String(userInfo.split(separator: ":", maxSplits: 1).first ?? "")
        let host = upstream.hostAndPort[..<colon]
        let serverPort = upstream.hostAndPort[upstream.hostAndPort.index(after: colon)...]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pgbouncer-\(UUID().uuidString)")
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // pgbouncer refuses to run as root; as root it runs as `postgres`, which must read its files.
        chmod(directory.path, 0o755)
        let configuration = """
            [databases]
            \(upstream.database) = host=\(host) port=\(serverPort) dbname=\(upstream.database)
            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = \(port)
            unix_socket_dir =
            auth_type = trust
            auth_file = \(directory.path)/userlist.txt
            ; The fronted role may PAUSE and RESUME (a failover as a pooler shows it to the gateway).
            admin_users = \(user)
            pool_mode = transaction
            default_pool_size = \(poolSize)
            max_client_conn = 500
            ; While PostgreSQL is down a client waits in the queue at most this long and then gets
            ; an error (SQLSTATE class 08, "unavailable"), as a direct connect would fail fast.
            query_wait_timeout = 5
            server_connect_timeout = 2
            server_login_retry = 1
            logfile =

            """
        let files = [("pgbouncer.ini", configuration), ("userlist.txt", "\"\(user)\" \"\"\n")]
        do {
            for (name, text) in files {
                let path = directory.appendingPathComponent(name).path
                try text.write(toFile: path, atomically: true, encoding: .utf8)
                chmod(path, 0o644)
            }
            process = try Self.launch(configuration: directory.appendingPathComponent("pgbouncer.ini").path)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        guard waitUntilServing() else {
            stop()
            throw TestSupportError("pgbouncer did not start")
        }
    }

    deinit { stop() }

    /// With `PUSH_GATEWAY_TEST_THROUGH_PGBOUNCER=1` (scripts/test's pgbouncer pass), a pgbouncer in
    /// front of `url` for a test gateway's `serve` sessions; otherwise nil and the gateway connects
    /// directly.
    public static func forTestGateway(fronting url: String) throws -> PgBouncer? {
        guard ProcessInfo.processInfo.environment["PUSH_GATEWAY_TEST_THROUGH_PGBOUNCER"] == "1" else { return nil }
        return try PgBouncer(fronting: url)
    }

    /// The same URI as the one fronted, through pgbouncer.
    public var url: String {
        var through = upstream
        through.hostAndPort = "127.0.0.1:\(port)"
        return through.string
    }

    /// `PAUSE`: pgbouncer lets running transactions finish, then holds every new statement until
    /// `resume()` (as during a failover or a maintenance window).
    public func pause() throws { try adminCommand("PAUSE") }

    /// `RESUME`: the statements held since `pause()` go on to the server.
    public func resume() throws { try adminCommand("RESUME") }

    /// One command on pgbouncer's admin console (the `pgbouncer` database), as the fronted role.
    private func adminCommand(_ command: String) throws {
        var console = upstream
        console.hostAndPort = "127.0.0.1:\(port)"
        console.database = "pgbouncer"
        let connection = try PostgresConnection(
            configuration: PostgresConfiguration(
                connectionString: console.string, statementTimeout: nil, lockTimeout: nil,
                connectTimeoutSeconds: TemporaryDatabase.connectTimeoutSeconds))
        try connection.executeScript(command)
    }

    /// A configuration through pgbouncer with no timeouts of its own (nothing set on any session).
    public func configuration() -> PostgresConfiguration {
        PostgresConfiguration(
            connectionString: url, statementTimeout: nil, lockTimeout: nil,
            connectTimeoutSeconds: TemporaryDatabase.connectTimeoutSeconds)
    }

    /// Kills pgbouncer, waits for it, and removes its files. Idempotent. SIGKILL, because a test
    /// process that blocks SIGTERM for its own signal handling passes that mask on to the child.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// pgbouncer on `configuration`, its output discarded (as `postgres` when this process is root).
    private static func launch(configuration: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/pgbouncer")
        process.arguments = (getuid() == 0 ? ["-u", "postgres"] : []) + [configuration]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    private func waitUntilServing() -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning {
            if let connection = try? PostgresConnection(configuration: configuration()),
                (try? connection.query("SELECT 1")) != nil
            {
                return true
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }
}

import Foundation
import PushPostgres
import Synchronization

/// A fresh database on the test server, dropped (with any roles it created) by `drop()`.
///
/// The test command exports `DATABASE_URL` as a superuser URI on database `postgres`
/// (scripts/lib/postgres.sh); every test gets its own database so suites run in any order and in
/// parallel.
public final class TemporaryDatabase: Sendable {
    /// libpq's `connect_timeout` for the tests' own sessions. The gateway's 2 s is too short for a
    /// machine running the sanitized pass, where a backend once took longer to start and a setup
    /// query failed with "connect timeout expired"; the tests wait for PostgreSQL, not test it.
    public static let connectTimeoutSeconds = 15

    /// The database name (`push_test_<random>`).
    public let name: String
    /// A superuser URI for this database.
    public let url: String
    private let serverURL: PostgresURL
    private let roles = Mutex<[String]>([])

    /// Creates a database, runs `body`, and drops the database whatever happens.
    public static func with<Value>(_ body: (TemporaryDatabase) throws -> Value) throws -> Value {
        let database = try TemporaryDatabase()
        defer { database.drop() }
        return try body(database)
    }

    /// A database on the test command's server (`DATABASE_URL`).
    public convenience init() throws {
        guard let raw = ProcessInfo.processInfo.environment["DATABASE_URL"] else {
            throw TestSupportError("DATABASE_URL must be a postgresql:// URI of a superuser (run scripts/test)")
        }
        try self.init(serverURL: raw)
    }

    /// A database on the server that the superuser URI `serverURL` names (e.g. a private
    /// `PostgresTestServer`).
    public init(serverURL raw: String) throws {
        guard let parsed = PostgresURL(raw) else { throw TestSupportError("not a postgresql:// URI") }
        serverURL = parsed
        name = "push_test_" + randomSuffix()
        var databaseURL = parsed
        databaseURL.database = name
        url = databaseURL.string
        try serverSession().query("CREATE DATABASE \(name)")
    }

    /// A superuser session on the server's own database, for creating and dropping.
    private func serverSession() throws -> PostgresConnection {
        try PostgresConnection(
            configuration: PostgresConfiguration(
                connectionString: serverURL.string, connectTimeoutSeconds: Self.connectTimeoutSeconds))
    }

    /// Drops the database (disconnecting any session still on it) and the roles made for it.
    public func drop() {
        guard let admin = try? serverSession() else { return }
        _ = try? admin.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        for role in roles.withLock({ $0 }) { _ = try? admin.query("DROP ROLE IF EXISTS \(role)") }
    }

    /// A configuration for this database as the superuser (or as `role`).
    public func configuration(
        role: TemporaryRole? = nil, statementTimeout: Duration? = .seconds(5), lockTimeout: Duration? = .seconds(2)
    ) -> PostgresConfiguration {
        PostgresConfiguration(
            connectionString: role.map { url(for: $0) } ?? url, statementTimeout: statementTimeout,
            lockTimeout: lockTimeout, connectTimeoutSeconds: Self.connectTimeoutSeconds)
    }

    /// A superuser session on this database.
    public func connect() throws -> PostgresConnection {
        try PostgresConnection(configuration: configuration())
    }

    /// Creates a login role (with no privileges yet) that `drop()` removes again.
    public func createRole() throws -> TemporaryRole {
        let role = TemporaryRole(name: "push_test_role_" + randomSuffix(), password: randomSuffix())
        let admin = try serverSession()
        // Generated names and passwords are [a-z0-9_] only; CREATE ROLE takes no parameters.
        try admin.query("CREATE ROLE \(role.name) LOGIN PASSWORD '\(role.password)'")
        roles.withLock { $0.append(role.name) }
        return role
    }

    /// A URI for this database that logs in as `role`.
    public func url(for role: TemporaryRole) -> String {
        var roleURL = serverURL
        roleURL.database = name
        roleURL.userInfo = "\(role.name):\(role.password)"
        return roleURL.string
    }
}

/// A login role created for one test.
public struct TemporaryRole: Sendable {
    public let name: String
    public let password: String
}

/// A test-environment problem (missing server, failed tool).
public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

func randomSuffix() -> String {
    let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
    return String((0..<12).map { _ in alphabet.randomElement()! })
}

/// The parts of a `postgresql://[userinfo@]host[:port]/database[?query]` URI that tests swap.
struct PostgresURL {
    var scheme: String
    var userInfo: String?
    var hostAndPort: String
    var database: String
    var query: String

    init?(_ text: String) {
        guard let schemeEnd = text.range(of: "://") else { return nil }
        scheme = String(text[..<schemeEnd.lowerBound])
        guard scheme == "postgresql" || scheme == "postgres" else { return nil }
        var rest = Substring(text[schemeEnd.upperBound...])
        if let queryStart = rest.firstIndex(of: "?") {
            query = String(rest[queryStart...])
            rest = rest[..<queryStart]
        } else {
            query = ""
        }
        guard let pathStart = rest.firstIndex(of: "/") else { return nil }
        database = String(rest[rest.index(after: pathStart)...])
        var authority = rest[..<pathStart]
        if let at = authority.lastIndex(of: "@") {
            userInfo = String(authority[..<at])
            authority = authority[authority.index(after: at)...]
        }
        hostAndPort = String(authority)
    }

    var string: String {
        "\(scheme)://\(userInfo.map { $0 + "@" } ?? "")\(hostAndPort)/\(database)\(query)"
    }
}

import Foundation
import Glibc

/// A private PostgreSQL cluster that a test can stop and start (for outage tests), separate from the
/// shared test server. Needs `PUSH_GATEWAY_TEST_PG_BIN` (initdb, pg_ctl); as root the server runs
/// as the `postgres` user from cwd `/` because initdb and postgres refuse root.
public final class PostgresTestServer {
    public let port: Int
    private let directory: String
    private let binDirectory: String

    /// A superuser URI for database `postgres`.
    public var url: String { "postgresql://postgres@127.0.0.1:\(port)/postgres" }

    /// Creates a cluster in a temporary directory and starts it.
    public init() throws {
        guard let bin = ProcessInfo.processInfo.environment["PUSH_GATEWAY_TEST_PG_BIN"], !bin.isEmpty else {
            throw TestSupportError("PUSH_GATEWAY_TEST_PG_BIN is not set (run scripts/test)")
        }
        binDirectory = bin
        directory = NSTemporaryDirectory() + "push-gateway-pg-" + randomSuffix()
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        if getuid() == 0 { try Self.run("/bin/chown", ["postgres:postgres", directory], asServerUser: false) }
        port = try freeLoopbackPort()
        try Self.run(
            "\(bin)/initdb",
            ["-D", "\(directory)/data", "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"],
            asServerUser: true)
        try start()
    }

    deinit {
        _ = try? Self.run(
            "\(binDirectory)/pg_ctl", ["-D", "\(directory)/data", "-m", "immediate", "stop"], asServerUser: true)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts the server and waits until it accepts connections.
    public func start() throws {
        let options =
            "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        try Self.run(
            "\(binDirectory)/pg_ctl",
            ["-D", "\(directory)/data", "-l", "\(directory)/server.log", "-w", "-t", "30", "-o", options, "start"],
            asServerUser: true)
    }

    /// Stops the server (fast shutdown: sessions are terminated) and waits until it is down.
    public func stop() throws {
        try Self.run(
            "\(binDirectory)/pg_ctl", ["-D", "\(directory)/data", "-m", "fast", "-w", "stop"], asServerUser: true)
    }

    /// Runs a tool from cwd `/` with output discarded, as the `postgres` user when we are root.
    /// posix_spawn + waitpid rather than Foundation's Process, whose exit monitoring can stall
    /// when the test's threads are all blocked.
    private static func run(_ executable: String, _ arguments: [String], asServerUser: Bool) throws {
        let command =
            asServerUser && getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--", executable] : [executable]
        let argv = ["/bin/sh", "-c", "cd / && exec \"$0\" \"$@\""] + command + arguments
        let environment = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"]
        let argvPointers = argv.map { strdup($0) } + [nil]
        let environmentPointers = environment.map { strdup($0) } + [nil]
        defer {
            argvPointers.forEach { free($0) }
            environmentPointers.forEach { free($0) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, argvPointers, environmentPointers)
        guard spawned == 0 else { throw TestSupportError("cannot start \(executable)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw TestSupportError("waitpid failed") }
        }
        // WIFEXITED and WEXITSTATUS are macros; their definitions in <sys/wait.h> spelled out.
        let exited = status & 0x7f == 0
        let exitStatus = (status >> 8) & 0xff
        guard exited && exitStatus == 0 else {
            throw TestSupportError("\((executable as NSString).lastPathComponent) failed (status \(status))")
        }
    }
}

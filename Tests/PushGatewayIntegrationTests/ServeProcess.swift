import Foundation
import PushTestSupport
import Testing

/// The real `push-gateway serve` binary as a child process on free loopback ports, with what the
/// load and fault tests read about it from /proc: descriptors and resident memory.
final class ServeProcess {
    let publicPort: Int
    let privatePort: Int
    private let process: Process

    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts `serve` with `environment` plus its two listen addresses (free ones, or `ports` to
    /// restart on the addresses of an earlier process), and waits until the public listener accepts
    /// connections. With `softOpenFileLimit`, serve starts with that soft `RLIMIT_NOFILE` (set by a
    /// shell that then execs it, so the pid is serve's). `executable` runs another build of the
    /// gateway (the previous release's) instead of this one.
    init(
        environment: [String: String], ports: (public: Int, private: Int)? = nil, softOpenFileLimit: Int? = nil,
        executable: URL? = nil
    ) throws {
        publicPort = try ports?.public ?? freeLoopbackPort()
        privatePort = try ports?.private ?? freeLoopbackPort()
        var variables = environment
        variables["PUSH_GATEWAY_LISTEN"] = "127.0.0.1:\(publicPort)"
        variables["PUSH_GATEWAY_HEALTH_LISTEN"] = "127.0.0.1:\(privatePort)"
        process = Process()
        let executable = try executable ?? ReaperServeTests.executable()
        if let softOpenFileLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -S -n \(softOpenFileLimit) && exec \"$0\" serve", executable.path]
        } else {
            process.executableURL = executable
            process.arguments = ["serve"]
        }
        // Its log goes to a file (the suite's log scan reads it when scripts/test collects one), so
        // that a start that fails shows why.
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        logPath = TestLogs.capture(process, environment: &variables)
        process.environment = variables
        try process.run()
        let publicPort = publicPort
        guard eventually(within: 30, { (try? HTTPTestClient(port: publicPort)) != nil }) else {
            let exited = !process.isRunning
            stop()
            throw StartFailure(
                description: "serve did not listen on 127.0.0.1:\(publicPort) within 30 s (exited: \(exited)); "
                    + "its log ends:\n" + TestLogs.tail(of: logPath))
        }
    }

    /// Where serve's standard error goes.
    private let logPath: String?

    deinit { stop() }

    var isRunning: Bool { process.isRunning }
    var pid: Int32 { process.processIdentifier }

    /// Whether `GET /_readiness` answers 200 within `seconds`.
    func becomesReady(within seconds: Double) -> Bool {
        let privatePort = privatePort
        return eventually(within: seconds) {
            guard let client = try? HTTPTestClient(port: privatePort) else { return false }
            guard (try? client.send("GET /_readiness HTTP/1.1\r\nHost: gateway\r\n\r\n")) != nil else { return false }
            return (try? client.readResponse().status) == 200
        }
    }

    /// SIGKILL: no drain, no bookkeeping; returns once the process is gone.
    func killAbruptly() -> Bool {
        kill(process.processIdentifier, SIGKILL)
        return eventually(within: 10) { !process.isRunning }
    }

    /// SIGTERM (serve drains), SIGKILL after 10 s; returns the exit status when it exited by itself.
    @discardableResult
    func stop() -> Int32? {
        guard process.isRunning else { return nil }
        process.terminate()
        if !eventually(within: 10, { !process.isRunning }) {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }

    /// The gateway's open descriptors, split by what they point at (`socket:[…]`, `anon_inode:[eventpoll]`, …).
    struct Descriptors: Equatable, CustomStringConvertible {
        var sockets = 0
        /// Everything else by kind: files, pipes, epoll, eventfd, timerfd.
        var others: [String: Int] = [:]

        var total: Int { sockets + others.values.reduce(0, +) }
        var description: String {
            "\(sockets) sockets, "
                + others.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        }
    }

    func descriptors() throws -> Descriptors {
        let directory = "/proc/\(pid)/fd"
        var result = Descriptors()
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            // A descriptor closed between the listing and the readlink is simply not counted.
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name)
            else { continue }
            if target.hasPrefix("socket:") {
                result.sockets += 1
            } else {
                let kind =
                    target.hasPrefix("anon_inode:") ? target : target.hasPrefix("pipe:") ? "pipe" : "file \(target)"
                result.others[kind, default: 0] += 1
            }
        }
        return result
    }

    /// The descriptors once their count has stopped changing for 200 ms (connections the client
    /// closed a moment ago close on the gateway's side a little later), or after 5 s.
    func settledDescriptors() throws -> Descriptors {
        var previous = try descriptors()
        _ = eventually(within: 5) {
            Thread.sleep(forTimeInterval: 0.2)
            let current = (try? descriptors()) ?? previous
            defer { previous = current }
            return current == previous
        }
        return previous
    }

    /// VmRSS of the gateway in KiB.
    func residentKiB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        let value = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first
        return try #require(value.flatMap { Int($0) })
    }
}

import Foundation
import PushSystem

/// A real tinyproxy (Debian package, installed by scripts/lib/packages.sh) on a loopback port,
/// allowing CONNECT to `connectPort` only. Stopped by `stop()` or at deinit.
public final class TinyProxy {
    public let port: Int
    private let directory: URL
    private let process: Process

    public init(connectPort: UInt16) throws {
        port = try freeLoopbackPort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tinyproxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configuration = """
            Port \(port)
            Listen 127.0.0.1
            Timeout 30
            MaxClients 50
            Allow 127.0.0.1
            ConnectPort \(connectPort)
            LogFile "\(directory.appendingPathComponent("log").path)"
            LogLevel Info

            """
        let file = directory.appendingPathComponent("tinyproxy.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tinyproxy")
        process.arguments = ["-d", "-c", file.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = MonotonicInstant.now().advanced(by: .seconds(5))
        while (try? TCPConnector.connect(to: SocketAddress(family: .ipv4, host: "127.0.0.1", port: UInt16(port))))
            == nil
        {
            guard MonotonicInstant.now() < deadline, process.isRunning else {
                stop()
                throw TestSupportError("tinyproxy did not start")
            }
            usleep(20_000)
        }
    }

    deinit { stop() }

    /// The CONNECT targets tinyproxy logged, for checking the tunnel went through it.
    public var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("log"), encoding: .utf8)) ?? ""
    }

    public func stop() {
        if process.isRunning {
            // SIGKILL: tinyproxy inherits the test runner's blocked SIGTERM and would ignore it.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}

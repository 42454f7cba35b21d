import Foundation
import PushSystem

/// An HTTPS/1.1 server on a loopback port (Python's `http.server` behind its `ssl` module, with the
/// `APNsTestCertificates` server certificate) that answers every GET with the status and body last
/// given to `serve`: the Key Attestation status list's URL in tests (docs/protocol.md §5a step 3).
/// Stopped by `stop()` or at deinit.
public final class StatusListTestServer {
    public let port: UInt16
    private let directory: URL
    private let process: Process

    private static let script = """
        import http.server, os, ssl, sys
        directory, certificate, key = sys.argv[1:4]
        def read(name):
            with open(os.path.join(directory, name), "rb") as file:
                return file.read()
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = read("body")
                self.send_response(int(read("status")))
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                with open(os.path.join(directory, "requests"), "a") as log:
                    log.write(self.path + "\\n")
            def log_message(self, *arguments):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print(server.server_address[1], flush=True)
        server.serve_forever()

        """

    public init(status: Int = 200, body: String) throws {
        let certificates = try APNsTestCertificates.shared()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("status-list-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let scriptFile = directory.appendingPathComponent("server.py")
        try Self.script.write(to: scriptFile, atomically: true, encoding: .utf8)
        try Self.write(status: status, body: body, to: directory)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", scriptFile.path, directory.path, certificates.serverCertificateFile, certificates.serverKeyFile,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        var line: [UInt8] = []
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        guard let port = UInt16(String(decoding: line, as: UTF8.self)) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TestSupportError("the status list server printed no port")
        }
        self.port = port
    }

    deinit { stop() }

    /// `https://127.0.0.1:<port>/attestation/status`.
    public var url: String { "https://127.0.0.1:\(port)/attestation/status" }

    /// The trust anchor of the server's certificate.
    public static var caFile: String { get throws { try APNsTestCertificates.shared().caFile } }

    /// How many GETs the server has answered.
    public var requestCount: Int {
        let log = (try? String(contentsOf: directory.appendingPathComponent("requests"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").count
    }

    /// Every later GET answers `status` with `body`.
    public func serve(status: Int, body: String) throws {
        try Self.write(status: status, body: body, to: directory)
    }

    private static func write(status: Int, body: String, to directory: URL) throws {
        try Data(body.utf8).write(to: directory.appendingPathComponent("body"), options: .atomic)
        try Data(String(status).utf8).write(to: directory.appendingPathComponent("status"), options: .atomic)
    }

    public func stop() {
        if process.isRunning {
            // SIGKILL: the child inherits the test runner's blocked SIGTERM and would ignore it.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}

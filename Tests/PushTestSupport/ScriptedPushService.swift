import Foundation
import PushSystem

/// A throwaway PKI for Web Push egress tests: a CA and one leaf for `push.example`,
/// `*.push.example`, `localhost`, `127.0.0.1` and `::1`, made once per test process with `openssl`.
public struct PushServiceTestCertificates: Sendable {
    public let caFile: String
    public let certificateFile: String
    public let keyFile: String

    public static func shared() throws -> PushServiceTestCertificates { try cached.get() }

    private static let cached: Result<PushServiceTestCertificates, any Error> = Result { try generate() }

    private static func generate() throws -> PushServiceTestCertificates {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("push-service-pki-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func path(_ name: String) -> String { "\(directory)/\(name)" }
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try APNsTestCertificates.openssl(
            ["req", "-x509"] + curve + [
                "-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2", "-subj", "/CN=push service test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        try APNsTestCertificates.openssl(
            ["req"] + curve + ["-keyout", path("leaf.key"), "-out", path("leaf.csr"), "-subj", "/CN=push.example"])
        try Data(
            """
            subjectAltName=DNS:push.example,DNS:*.push.example,DNS:localhost,IP:127.0.0.1,IP:::1
            basicConstraints=CA:FALSE
            extendedKeyUsage=serverAuth

            """.utf8
        ).write(to: URL(fileURLWithPath: path("leaf.ext")))
        try APNsTestCertificates.openssl([
            "x509", "-req", "-in", path("leaf.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
            "-CAcreateserial", "-out", path("leaf.pem"), "-days", "2", "-extfile", path("leaf.ext"),
        ])
        return PushServiceTestCertificates(
            caFile: path("ca.pem"), certificateFile: path("leaf.pem"), keyFile: path("leaf.key"))
    }
}

/// A scripted HTTPS/1.1 push service for egress tests (Python's `ssl` and `http.server`, standard
/// library only), on 127.0.0.1 or ::1 with `PushServiceTestCertificates`. The request path is the
/// script: `/status/<code>` answers that status (query `retry_after=` adds `Retry-After`,
/// `location=` a `Location`), `/hang` never answers, `/big-head` sends a 20 KiB field, `/big-body`
/// an 8 KiB body. Every connection and request is recorded (`records`). Not the `webpush-mock`.
public final class ScriptedPushService {
    /// One line of the service's record.
    public struct Record: Sendable {
        public let event: String
        public let connection: Int
        public let fields: [String: String]
        public let path: String?
        public let bodyLength: Int?
        public let serverName: String?
    }

    public let port: Int
    private let directory: URL
    private let process: Process
    /// The service's standard input: it exits when this closes (the pyenv shim may run Python as
    /// a child, which a signal to `process` would not reach).
    private let lifeline = Pipe()

    public init(ipv6: Bool = false) throws {
        let certificates = try PushServiceTestCertificates.shared()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("push-service-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = directory.appendingPathComponent("service.py")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        let process = Process()
        self.process = process
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", script.path, certificates.certificateFile, certificates.keyFile, directory.path,
            ipv6 ? "::1" : "127.0.0.1",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = lifeline
        let stderrFile = directory.appendingPathComponent("stderr")
        FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        try process.run()
        let portFile = directory.appendingPathComponent("port")
        var found: Int?
        _ = eventually(within: 20, every: 0.05) {
            found = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap {
                $0.hasSuffix("\n") ? Int($0.dropLast()) : nil
            }
            return found != nil || !process.isRunning
        }
        guard let found else {
            let errors = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
            kill(process.processIdentifier, SIGKILL)
            throw TestSupportError("the scripted push service did not start: \(errors)")
        }
        port = found
    }

    deinit { stop() }

    public func stop() {
        try? lifeline.fileHandleForWriting.close()
        if process.isRunning {
            // SIGKILL: the child inherits the test runner's blocked SIGTERM and would ignore it.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// What the service's standard error holds (for failure messages).
    public var standardError: String {
        (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
    }

    /// Every connection opened and closed and every request received, in order.
    public var records: [Record] {
        let text = (try? String(contentsOf: directory.appendingPathComponent("records"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let event = object["event"] as? String, let connection = object["connection"] as? Int
            else { return nil }
            return Record(
                event: event, connection: connection, fields: object["headers"] as? [String: String] ?? [:],
                path: object["path"] as? String, bodyLength: object["body_length"] as? Int,
                serverName: object["sni"] as? String)
        }
    }

    public var requests: [Record] { records.filter { $0.event == "request" } }

    private static let script = #"""
        import http.server, json, os, socketserver, ssl, sys, threading, time, urllib.parse

        def exit_when_parent_closes_stdin():
            while sys.stdin.buffer.read(1):
                pass
            os._exit(0)

        threading.Thread(target=exit_when_parent_closes_stdin, daemon=True).start()

        certificate, key, directory, host = sys.argv[1:5]
        lock = threading.Lock()
        counter = [0]
        records = open(directory + "/records", "a", buffering=1)

        def record(**fields):
            with lock:
                records.write(json.dumps(fields) + "\n")

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                with lock:
                    counter[0] += 1
                    self.connection_id = counter[0]
                record(event="open", connection=self.connection_id, sni=getattr(self.request, "sni", None))

            def finish(self):
                try:
                    super().finish()
                finally:
                    record(event="close", connection=self.connection_id)

            def log_message(self, *arguments):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                record(event="request", connection=self.connection_id, path=self.path,
                       headers={k.lower(): v for k, v in self.headers.items()}, body_length=len(body))
                if url.path == "/hang":
                    time.sleep(120)
                    return
                if url.path == "/big-head":
                    self.send_response(201)
                    self.send_header("X-Filler", "a" * 20000)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if url.path == "/big-body":
                    self.send_response(201)
                    self.send_header("Content-Length", "8192")
                    self.end_headers()
                    self.wfile.write(b"b" * 8192)
                    return
                status = int(url.path.split("/")[2]) if url.path.startswith("/status/") else 201
                self.send_response(status)
                if "retry_after" in query:
                    self.send_header("Retry-After", query["retry_after"])
                if "location" in query:
                    self.send_header("Location", query["location"])
                self.send_header("Content-Length", "0")
                self.end_headers()

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        import socket
        Server.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        server = Server((host, 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        context.set_alpn_protocols(["http/1.1"])
        def remember_name(connection, name, _):
            connection.sni = name
        context.sni_callback = remember_name
        server.socket = context.wrap_socket(server.socket, server_side=True)
        with open(directory + "/port.tmp", "w") as f:
            f.write("%d\n" % server.server_address[1])
        import os
        os.rename(directory + "/port.tmp", directory + "/port")
        server.serve_forever()
        """#
}

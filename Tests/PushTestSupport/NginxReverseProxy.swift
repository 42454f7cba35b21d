import Foundation
import Glibc

/// A real nginx (the Debian `nginx-light` package) terminating TLS on a loopback port in front of a
/// local upstream, configured from the operator example `deploy/nginx-push-gateway.conf`: only the
/// listener, the certificate, the server name and the upstream address are rewritten, so every
/// proxy directive the example sets is the one under test. Stopped (and its files removed) by
/// `stop()` or at deinit.
public final class NginxReverseProxy {
    /// The loopback port nginx listens on with TLS.
    public let port: Int
    /// The name the throwaway certificate is issued for; clients resolve it to 127.0.0.1.
    public let serverName: String
    /// The `http` block content nginx runs (the adapted example), for tests to inspect.
    public let adaptedExample: String

    private let directory: URL
    private let process: Process

    /// Writes a throwaway certificate and the adapted configuration, starts nginx on `port` (e.g.
    /// from `freeLoopbackPort()`), and waits until it accepts connections.
    public init(example: String, serverName: String, port: Int, upstreamPort: Int) throws {
        self.port = port
        self.serverName = serverName
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nginx-\(UUID().uuidString)")
        self.directory = directory
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // nginx started as root runs its workers as `nobody`; they must reach their temp folders.
        chmod(directory.path, 0o755)
        do {
            try Self.run(
                "/usr/bin/openssl",
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
                    "-subj", "/CN=\(serverName)", "-addext", "subjectAltName=DNS:\(serverName)",
                    "-keyout", path("key.pem"), "-out", path("certificate.pem"),
                ])
            adaptedExample = try Self.adapt(
                example, port: port, serverName: serverName, upstreamPort: upstreamPort,
                certificate: path("certificate.pem"), key: path("key.pem"))
            try Self.mainConfiguration(directory: directory, http: adaptedExample)
                .write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
            let process = Process()
            self.process = process
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
            // `-e` moves the startup error log off /var/log/nginx, which a test must not need.
            process.arguments = [
                "-p", directory.path + "/", "-c", path("nginx.conf"), "-e", path("error.log"),
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        guard waitUntilListening() else {
            let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            stop()
            throw TestSupportError("nginx did not start: \(log)")
        }
    }

    deinit { stop() }

    /// The throwaway certificate (PEM) a client must trust.
    public var certificatePath: String { path("certificate.pem") }

    /// `https://serverName:port`, the origin a client of this proxy sees.
    public var origin: String { "https://\(serverName):\(port)" }

    /// Stops nginx (SIGTERM: fast shutdown), waits for it, and removes its files. Idempotent.
    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// POSTs `body` to `origin + path` over TLS with the curl command line (libcurl, verifying the
    /// throwaway certificate and the host name; `serverName` resolved to 127.0.0.1).
    public func post(
        path requestPath: String, body: [UInt8], headers: [String]
    ) throws -> (
        status: Int, body: String
    ) {
        let bodyFile = directory.appendingPathComponent("body-\(UUID().uuidString)")
        try Data(body).write(to: bodyFile)
        defer { try? FileManager.default.removeItem(at: bodyFile) }
        var arguments = [
            "--silent", "--show-error", "--cacert", certificatePath, "--resolve", "\(serverName):\(port):127.0.0.1",
            "--max-time", "30", "-H", "Content-Type: application/json", "-H", "Expect:",
            "--data-binary", "@" + bodyFile.path, "--write-out", "\n%{http_code}",
        ]
        for header in headers { arguments += ["-H", header] }
        arguments.append(origin + requestPath)
        let output = try Self.run("/usr/bin/curl", arguments)
        guard let split = output.lastIndex(of: "\n"), let status = Int(output[output.index(after: split)...])
        else { throw TestSupportError("unexpected curl output") }
        return (status, String(output[..<split]))
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func waitUntilListening() -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning {
            if (try? HTTPTestClient(port: port, timeout: .seconds(1))) != nil { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    /// The example with loopback addresses and the throwaway certificate. Every replaced line must
    /// occur exactly once, so a changed example fails here instead of testing something else.
    static func adapt(
        _ example: String, port: Int, serverName: String, upstreamPort: Int, certificate: String, key: String
    ) throws -> String {
        var text = example
        let replacements: [(Regex<AnyRegexOutput>, String)] = [
            (try Regex(#"server 127\.0\.0\.1:\d+;"#), "server 127.0.0.1:\(upstreamPort);"),
            (try Regex(#"listen 443 ssl http2;"#), "listen 127.0.0.1:\(port) ssl http2;"),
            (try Regex(#"server_name [^;]+;"#), "server_name \(serverName);"),
            (try Regex(#"ssl_certificate [^;]+;"#), "ssl_certificate \(certificate);"),
            (try Regex(#"ssl_certificate_key [^;]+;"#), "ssl_certificate_key \(key);"),
        ]
        for (pattern, replacement) in replacements {
            let matches = text.matches(of: pattern)
            guard matches.count == 1, let match = matches.first else {
                throw TestSupportError("the nginx example no longer has exactly one line to adapt")
            }
            text.replaceSubrange(match.range, with: replacement)
        }
        return text
    }

    static func mainConfiguration(directory: URL, http: String) -> String {
        let folder = directory.path
        return """
            daemon off;
            worker_processes 1;
            pid \(folder)/nginx.pid;
            error_log \(folder)/error.log warn;
            events { worker_connections 64; }
            http {
            access_log off;
            client_body_temp_path \(folder)/client-body;
            proxy_temp_path \(folder)/proxy;
            fastcgi_temp_path \(folder)/fastcgi;
            uwsgi_temp_path \(folder)/uwsgi;
            scgi_temp_path \(folder)/scgi;
            \(http)
            }

            """
    }

    /// Runs a tool to completion; its standard output, or an error carrying its standard error.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let outcome = try ToolProcess.run(URL(fileURLWithPath: executable), arguments)
        guard outcome.status == 0 else {
            throw TestSupportError("\(URL(fileURLWithPath: executable).lastPathComponent) failed: \(outcome.errors)")
        }
        return outcome.outputText
    }
}

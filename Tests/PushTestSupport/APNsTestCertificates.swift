import Foundation

/// A throwaway PKI for TLS tests of the APNs client and `apns-mock`, made once per test process
/// with the `openssl` command-line tool: a CA, a server certificate for 127.0.0.1 and localhost
/// signed by it, and an unrelated CA that must not be trusted for that server.
public struct APNsTestCertificates: Sendable {
    public let directory: String
    public let caFile: String
    public let serverCertificateFile: String
    public let serverKeyFile: String
    /// A CA that did not sign the server certificate.
    public let unrelatedCAFile: String
    /// A TLS client certificate (CN=push-gateway test client) signed by `caFile`, and its key, in
    /// one PEM file as `PUSH_GATEWAY_PROFILE_<P>_APNS_CERT_FILE` holds them.
    public let clientCertificateAndKeyFile: String

    public struct GenerationError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The shared set, generated on first use.
    public static func shared() throws -> APNsTestCertificates {
        try cached.get()
    }

    private static let cached: Result<APNsTestCertificates, any Error> = Result { try generate() }

    private static func generate() throws -> APNsTestCertificates {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("apns-test-pki-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func path(_ name: String) -> String { "\(directory)/\(name)" }
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        for name in ["ca", "unrelated-ca"] {
            try openssl(
                ["req", "-x509"] + curve + [
                    "-keyout", path("\(name).key"), "-out", path("\(name).pem"), "-days", "2",
                    "-subj", "/CN=push-gateway test \(name)",
                    "-addext", "basicConstraints=critical,CA:TRUE",
                    "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                ])
        }
        try openssl(
            ["req"] + curve + ["-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=localhost"])
        try Data(
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n".utf8
        ).write(to: URL(fileURLWithPath: path("server.ext")))
        try openssl([
            "x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
            "-CAcreateserial", "-out", path("server.pem"), "-days", "2", "-extfile", path("server.ext"),
        ])
        try openssl(
            ["req"] + curve + [
                "-keyout", path("client.key"), "-out", path("client.csr"), "-subj", "/CN=push-gateway test client",
            ])
        try Data("basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n".utf8)
            .write(to: URL(fileURLWithPath: path("client.ext")))
        try openssl([
            "x509", "-req", "-in", path("client.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
            "-CAcreateserial", "-out", path("client.pem"), "-days", "2", "-extfile", path("client.ext"),
        ])
        let combined =
            try Data(contentsOf: URL(fileURLWithPath: path("client.pem")))
            + Data(contentsOf: URL(fileURLWithPath: path("client.key")))
        try combined.write(to: URL(fileURLWithPath: path("client-with-key.pem")))
        return APNsTestCertificates(
            directory: directory, caFile: path("ca.pem"), serverCertificateFile: path("server.pem"),
            serverKeyFile: path("server.key"), unrelatedCAFile: path("unrelated-ca.pem"),
            clientCertificateAndKeyFile: path("client-with-key.pem"))
    }

    /// Runs `/usr/bin/openssl` with `arguments`; its standard error is the failure's description.
    static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw GenerationError(
                description: "openssl \(arguments[0]) failed: \(String(decoding: message, as: UTF8.self))")
        }
    }
}

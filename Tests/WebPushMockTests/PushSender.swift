import Foundation
import PushCrypto
import PushSystem
import PushTestSupport

@testable import PushWebPush

/// What an application server sends to a push resource, built with the gateway's own
/// WebPushEncryption and VAPIDSigner exactly as docs/protocol.md §8b prescribes.
struct PushRequest {
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    static func wake(to endpointText: String, signer: VAPIDSigner, now: Int64 = PushRequest.now()) throws -> PushRequest
    {
        let endpoint = try requireEndpoint(endpointText)
        return PushRequest(
            headers: [
                ("TTL", "60"), ("Urgency", "high"), ("Topic", "reconnect"), ("Content-Encoding", "aes128gcm"),
                ("Content-Type", "application/octet-stream"),
                ("Authorization", try signer.authorization(origin: endpoint.origin, now: now)),
            ], body: try WebPushEncryption.encrypt(WebPushEncryption.wakePlaintext, to: endpoint))
    }

    /// §8b's wake with `padding` zero bytes after its delimiter: valid RFC 8188, but not §8b's body.
    static func paddedWakeBody(to endpoint: WebPushEndpoint, padding: Int) throws -> [UInt8] {
        let sender = try P256PrivateKey.generate()
        let salt = try SecureRandom.bytes(16)
        let senderPublicKey = sender.publicKey.uncompressedPoint
        let (key, nonce) = try WebPushEncryption.contentKeys(
            sharedSecret: sender.sharedSecret(with: P256PublicKey(uncompressedPoint: endpoint.userAgentPublicKey)),
            authenticationSecret: endpoint.authenticationSecret, userAgentPublicKey: endpoint.userAgentPublicKey,
            senderPublicKey: senderPublicKey, salt: salt)
        let record = try AES128GCM.seal(
            key: key, nonce: nonce,
            plaintext: WebPushEncryption.wakePlaintext + [0x02] + [UInt8](repeating: 0, count: padding))
        return salt + [0x00, 0x00, 0x10, 0x00, 65] + senderPublicKey + record
    }

    static func now() -> Int64 { SystemWallClock().unixMilliseconds() / 1000 }

    /// Replaces (or with nil removes) the header `name`.
    func setting(_ name: String, _ value: String?) -> PushRequest {
        var copy = self
        copy.headers.removeAll { $0.name.lowercased() == name.lowercased() }
        if let value { copy.headers.append((name, value)) }
        return copy
    }
}

struct EndpointError: Error {}

/// The endpoint string parsed by the gateway's parser (the mock must hand out what it accepts).
func requireEndpoint(_ text: String) throws -> WebPushEndpoint {
    guard let endpoint = WebPushEndpoint(text) else { throw EndpointError() }
    return endpoint
}

/// curl, the command-line tool, as an independent HTTP client over TLS.
enum Curl {
    enum Version: String {
        case http2 = "--http2"
        case http11 = "--http1.1"
    }

    struct Answer {
        /// `%{http_version}`: `2` or `1.1`.
        let httpVersion: String
        let status: Int
        /// Response header fields, names lowercased.
        let headers: [String: String]
        let body: String
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func post(
        _ url: String, _ request: PushRequest, version: Version, caFile: String, method: String = "POST"
    ) throws -> Answer {
        try run(
            url, headers: request.headers, body: request.body, version: version, caFile: caFile, method: method)
    }

    /// curl's exit status for a request the mock does not answer: 28 when `--max-time` ran out,
    /// another non-zero status when the connection ended without an answer.
    static func exitStatus(
        _ url: String, _ request: PushRequest, version: Version, caFile: String, maxTime: Int
    ) throws -> Int32 {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webpush-curl-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bodyFile = directory.appendingPathComponent("body")
        try Data(request.body).write(to: bodyFile)
        var arguments = [
            "-sS", "--max-time", "\(maxTime)", "--cacert", caFile, version.rawValue, "-o", "/dev/null",
            "--data-binary", "@\(bodyFile.path)",
        ]
        for (name, value) in request.headers { arguments += ["-H", "\(name): \(value)"] }
        return try ToolProcess.run(URL(fileURLWithPath: "/usr/bin/curl"), arguments + [url]).status
    }

    static func run(
        _ url: String, headers: [(name: String, value: String)], body: [UInt8], version: Version, caFile: String,
        method: String = "POST", extraArguments: [String] = []
    ) throws -> Answer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webpush-curl-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bodyFile = directory.appendingPathComponent("body")
        let responseFile = directory.appendingPathComponent("response")
        try Data(body).write(to: bodyFile)
        var arguments = [
            "-sS", "--max-time", "30", "--cacert", caFile, version.rawValue, "-X", method, "-D", "-",
            "-o", responseFile.path, "-w", "\n%{http_version} %{http_code}",
        ]
        if method == "POST" { arguments += ["--data-binary", "@\(bodyFile.path)"] }
        // `Header;` sends a header with an empty value; curl drops `Header:` entirely.
        for (name, value) in headers { arguments += ["-H", value.isEmpty ? "\(name);" : "\(name): \(value)"] }
        let outcome = try ToolProcess.run(URL(fileURLWithPath: "/usr/bin/curl"), arguments + extraArguments + [url])
        guard outcome.status == 0 else {
            throw Failure(description: "curl exited \(outcome.status): \(outcome.errors)")
        }
        // "\r\n" is one Character to Swift: split the header lines on it explicitly.
        let lines = outcome.outputText.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let last = lines.last?.split(separator: " "), last.count == 2, let status = Int(last[1]) else {
            throw Failure(description: "curl printed \(outcome.outputText)")
        }
        var fields: [String: String] = [:]
        for line in lines.dropLast() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespacesAndNewlines)
        }
        let response = (try? String(contentsOf: responseFile, encoding: .utf8)) ?? ""
        return Answer(httpVersion: String(last[0]), status: status, headers: fields, body: response)
    }
}

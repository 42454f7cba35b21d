import Glibc
import PushCrypto
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import APNsMock
@testable import PushAPNs
@testable import PushHTTP2

@Suite("HTTP/2 client and apns-mock at the HTTP level", .testBodyThreads)
struct HTTP2ClientTests {
    final class Box: Sendable {
        let value = Mutex<Result<HTTP2Response, HTTP2Error>?>(nil)
    }

    /// Sends one raw request through the internal client and waits for its result.
    static func exchange(
        _ request: HTTP2Request, port: UInt16, certificates: APNsTestCertificates
    ) async throws
        -> HTTP2Response
    {
        let runtime = try TestRuntime()
        let client = HTTP2Client(
            configuration: HTTP2ClientConfiguration(requestTimeout: .seconds(10)), on: runtime.loop)
        defer { client.shutdown() }
        let target = HTTP2Target(
            host: "127.0.0.1", port: port, credentialID: "raw",
            tls: try TLSContext.client(extraTrustAnchorsFile: certificates.caFile))
        let result = await withCheckedContinuation { continuation in
            client.submit(request, to: target) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    static let path = "/3/device/" + String(repeating: "0a", count: 32)
    static let validHeaders = [
        HTTPField("apns-topic", "com.example.buzz"), HTTPField("apns-push-type", "alert"),
        HTTPField("authorization", APNsMockValidatorTests.jwt),
    ]

    @Test(
        "the mock answers Apple's errors over real HTTP/2 with a JSON reason",
        arguments: [
            ("GET", validHeaders, 10, 405, "MethodNotAllowed"),
            ("POST", validHeaders, 4097, 413, "PayloadTooLarge"),
            ("POST", Array(validHeaders.dropFirst()), 10, 400, "MissingTopic"),
            (
                "POST", validHeaders.map { $0.name == "apns-push-type" ? HTTPField($0.name, "banner") : $0 }, 10, 400,
                "InvalidPushType"
            ),
            ("POST", Array(validHeaders.dropLast()), 10, 403, "MissingProviderToken"),
        ] as [(String, [HTTPField], Int, Int, String)])
    func mockRejections(
        _ method: String, _ headers: [HTTPField], _ size: Int, _ status: Int, _ reason: String
    )
        async throws
    {
        let certificates = try APNsTestCertificates.shared()
        let server = try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile))
        defer { server.stop() }
        let request = HTTP2Request(
            method: method, path: Self.path, headers: headers, body: [UInt8](repeating: 0x20, count: size))
        let response = try await Self.exchange(request, port: server.port, certificates: certificates)
        #expect(response.status == status)
        #expect(APNsErrorBody.parse(response.body).reason == reason)
        #expect(response.header("apns-id") != nil)
        #expect(server.records.first?.body.count == size)
    }

    @Test("a 200 answer echoes apns-id and has no body")
    func echoesMessageID() async throws {
        let certificates = try APNsTestCertificates.shared()
        let server = try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile))
        defer { server.stop() }
        let id = "0B3C7D4E-1A2B-4C3D-8E9F-001122334455"
        let request = HTTP2Request(
            method: "POST", path: Self.path, headers: Self.validHeaders + [HTTPField("apns-id", id)],
            body: APNsClient.body)
        let response = try await Self.exchange(request, port: server.port, certificates: certificates)
        #expect(response.status == 200)
        #expect(response.header("apns-id") == id)
        #expect(response.body.isEmpty)
    }
}

@Suite("APNs server URLs and encodings", .testBodyThreads)
struct APNsServerTests {
    @Test(
        "https URLs with an optional port parse; anything else is refused",
        arguments: [
            ("https://127.0.0.1:8443", APNsServer(host: "127.0.0.1", port: 8443)),
            ("https://api.push.apple.com", APNsServer.production),
            ("https://localhost:9/", APNsServer(host: "localhost", port: 9)),
            ("https://[::1]:8443", APNsServer(host: "::1", port: 8443)),
            ("http://127.0.0.1:8443", nil), ("https://h:0", nil), ("https://h:99999", nil), ("https://h/path", nil),
            ("https://", nil), ("https://u@h", nil),
        ] as [(String, APNsServer?)])
    func parsesURL(_ url: String, _ expected: APNsServer?) {
        #expect(APNsServer(url: url) == expected)
    }

    @Test("device tokens are sent as lowercase hex in the path")
    func lowercaseHex() {
        let notification = APNsNotification(deviceToken: [0x00, 0xAB, 0x0F, 0xF0], requestID: "r", expiresAt: 1)
        #expect(APNsClient.request(for: notification, topic: "t", token: nil).path == "/3/device/00ab0ff0")
    }
}

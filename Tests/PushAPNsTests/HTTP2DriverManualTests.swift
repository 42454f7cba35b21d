import PushCrypto
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import APNsMock
@testable import PushAPNs
@testable import PushHTTP2

/// An `HTTP2Client` whose driver runs on a manual event loop the test thread drives on virtual
/// time (docs/decisions/0811). The server is apns-mock on real threads: its answers are waited for
/// as events (epoll with a real timeout), and only the driver's timers follow the virtual clock.
private final class ManualHTTP2Client {
    let loop: EventLoop
    let client: HTTP2Client
    let target: HTTP2Target

    init(configuration: HTTP2ClientConfiguration, port: UInt16, certificates: APNsTestCertificates) throws {
        loop = try EventLoop(manual: ManualClock())
        client = HTTP2Client(configuration: configuration, on: loop)
        target = HTTP2Target(
            host: "127.0.0.1", port: port, credentialID: "manual",
            tls: try TLSContext.client(extraTrustAnchorsFile: certificates.caFile))
    }

    /// Submits a request to the mock and returns the result the driver hands the completion, if it
    /// does so within `realTime` of real time spent waiting for the network.
    func submit(_ request: HTTP2Request = ManualHTTP2Client.request) -> Pending {
        let pending = Pending()
        client.submit(request, to: target) { result in pending.result.withLock { $0 = result } }
        loop.runPending()
        return pending
    }

    func send(_ request: HTTP2Request = ManualHTTP2Client.request) -> Result<HTTP2Response, HTTP2Error>? {
        let pending = submit(request)
        _ = run { pending.value != nil }
        return pending.value
    }

    /// Runs the loop, waiting for the network's events, until `condition` holds (at most 30 s of
    /// real time, a generous bound for a loaded machine; virtual time does not move meanwhile).
    func run(until condition: () -> Bool) -> Bool {
        let deadline = MonotonicInstant.now().advanced(by: .seconds(30))
        while !condition() {
            guard MonotonicInstant.now() < deadline else { return false }
            loop.runPending(waitingUpTo: .milliseconds(200))
        }
        return true
    }

    func advance(by duration: Duration) { loop.advance(by: duration) }

    deinit {
        client.shutdown()
        loop.runPending()
    }

    final class Pending: Sendable {
        let result = Mutex<Result<HTTP2Response, HTTP2Error>?>(nil)
        var value: Result<HTTP2Response, HTTP2Error>? { result.withLock { $0 } }
    }

    static let request = HTTP2Request(
        method: "POST", path: HTTP2ClientTests.path, headers: HTTP2ClientTests.validHeaders, body: APNsClient.body)
}

private func mockServer(
    port: UInt16 = 0, answerPings: Bool = true, script: APNsMockScript = APNsMockScript()
) throws -> APNsMockServer {
    let certificates = try APNsTestCertificates.shared()
    return try APNsMockServer(
        configuration: APNsMockServer.Configuration(
            port: port, certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile,
            script: script, answerPings: answerPings))
}

@Suite(
    "HTTP/2 client driver on a manual event loop: PING, request timeout, backoff on virtual time, GOAWAY",
    .testBodyThreads)
struct HTTP2DriverManualTests {
    @Test("an idle connection gets a PING once the ping interval has passed and is reused afterwards")
    func keepAlive() throws {
        let server = try mockServer()
        defer { server.stop() }
        let manual = try ManualHTTP2Client(
            configuration: HTTP2ClientConfiguration(pingInterval: .seconds(60)), port: server.port,
            certificates: APNsTestCertificates.shared())
        #expect(try manual.send()?.get().status == 200)
        #expect(server.pingsReceived == 0)
        manual.advance(by: .seconds(60))
        #expect(manual.run { server.pingsReceived >= 1 }, "no PING after the ping interval")
        #expect(try manual.send()?.get().status == 200)
        #expect(server.connectionCount == 1)
    }

    @Test("a PING left unanswered for the ping timeout closes the connection and the next request opens a new one")
    func deadConnection() throws {
        let server = try mockServer(answerPings: false)
        defer { server.stop() }
        let manual = try ManualHTTP2Client(
            configuration: HTTP2ClientConfiguration(pingInterval: .seconds(60), pingTimeout: .seconds(10)),
            port: server.port, certificates: APNsTestCertificates.shared())
        #expect(try manual.send()?.get().status == 200)
        manual.advance(by: .seconds(60))
        #expect(manual.run { server.pingsReceived >= 1 })
        manual.advance(by: .seconds(10))
        #expect(try manual.send()?.get().status == 200)
        #expect(server.connectionCount == 2)
    }

    @Test("a stream left unanswered fails as a timeout at the request timeout, not before")
    func requestTimeout() throws {
        let server = try mockServer(script: APNsMockScript(defaultReply: APNsMockReply(action: .stall)))
        defer { server.stop() }
        let manual = try ManualHTTP2Client(
            configuration: HTTP2ClientConfiguration(requestTimeout: .seconds(15), pingInterval: .seconds(600)),
            port: server.port, certificates: APNsTestCertificates.shared())
        let pending = manual.submit()
        #expect(manual.run { server.records.count == 1 }, "the mock never saw the request")
        manual.advance(by: .seconds(15) - .milliseconds(1))
        #expect(pending.value == nil)
        manual.advance(by: .milliseconds(1))
        guard case .failure(let failure)? = pending.value else {
            Issue.record("no failure at the request timeout: \(String(describing: pending.value))")
            return
        }
        #expect(failure.code == .timedOut)
    }

    @Test("after a failed connection, requests inside the backoff window fail at once and one after it reconnects")
    func reconnectAfterBackoff() throws {
        // Find a free port, then leave it closed for the first attempt.
        let probe = try mockServer()
        let port = probe.port
        probe.stop()
        let manual = try ManualHTTP2Client(
            configuration: HTTP2ClientConfiguration(
                maximumConnectionsPerPool: 1, reconnectBackoffInitial: .seconds(5)),
            port: port, certificates: APNsTestCertificates.shared())
        guard case .failure = manual.send() else {
            Issue.record("a request to a closed port did not fail")
            return
        }
        let server = try mockServer(port: port)
        defer { server.stop() }
        manual.advance(by: .seconds(5) - .milliseconds(1))
        guard case .failure = manual.send() else {
            Issue.record("a request inside the backoff window did not fail")
            return
        }
        #expect(server.connectionCount == 0)
        manual.advance(by: .milliseconds(1))
        #expect(try manual.send()?.get().status == 200)
        #expect(server.connectionCount == 1)
    }

    @Test("after the server's GOAWAY the next request opens a new connection and succeeds")
    func goAwayMovesToANewConnection() throws {
        let server = try mockServer(script: APNsMockScript(goAwayAfterStreams: 1, goAwayConnections: 1))
        defer { server.stop() }
        let manual = try ManualHTTP2Client(
            configuration: HTTP2ClientConfiguration(), port: server.port, certificates: APNsTestCertificates.shared())
        #expect(try manual.send()?.get().status == 200)
        #expect(try manual.send()?.get().status == 200)
        #expect(server.connectionCount == 2)
    }
}

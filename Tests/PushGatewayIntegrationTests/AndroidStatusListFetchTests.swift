import Foundation
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayLifecycle
@testable import PushGateway

/// docs/protocol.md §5a step 3, §4.2a, §12; docs/decisions/0510: the Key Attestation status list
/// fetched over real TLS from a local HTTPS server standing for Google's URL.
@Suite(
    "Android enrollment checks the Key Attestation status list fetched from its URL", .tags(.postgres, .external),
    .testBodyThreads)
struct AndroidStatusListFetchTests {
    static let revokedSerial = 0x5151
    static let revokingList = #"{"entries":{"\#(String(revokedSerial, radix: 16))":{"status":"REVOKED"}}}"#

    /// An Android gateway whose status list comes from `server` (no status file), trusting the
    /// server's CA through the test-only `PUSH_GATEWAY_FCM_CA_FILE`, through `proxy` when given; it
    /// returns once the fetch at start has produced a list.
    static func gateway(
        fetchingFrom server: StatusListTestServer, through proxy: TinyProxy? = nil,
        clock: LifecycleTestClock = LifecycleTestClock()
    ) throws -> AndroidLifecycleGateway {
        let caFile = try StatusListTestServer.caFile
        let android = try AndroidLifecycleGateway(statusList: nil, clock: clock) { environment in
            environment.with("PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_URL", server.url)
                .with("PUSH_GATEWAY_FCM_CA_FILE", caFile)
                .with("PUSH_GATEWAY_EGRESS_PROXY", proxy.map { "http://127.0.0.1:\($0.port)" })
        }
        guard eventually(within: 20, { android.statusAge != nil }) else {
            throw TestSupportError("the status list was not fetched at start")
        }
        return android
    }

    /// Enrolls a fresh device whose leaf carries `serialNumber`; the response.
    static func enroll(_ android: AndroidLifecycleGateway, serialNumber: Int) throws -> HTTPTestResponse {
        let gateway = android.lifecycle
        return try android.post(
            AndroidLifecycleGateway.path,
            try android.makeDevice().enrollBody(
                challenge: try gateway.challenge(), expiresAt: gateway.clock.unixSeconds() + 3600,
                serialNumber: serialNumber))
    }

    @Test("the list fetched over HTTPS at start refuses a listed serial as revoked and lets others enroll")
    func fetchedListRevokes() throws {
        let server = try StatusListTestServer(body: Self.revokingList)
        let clock = LifecycleTestClock()
        let android = try Self.gateway(fetchingFrom: server, clock: clock)
        #expect(server.requestCount == 1)

        let refused = try Self.enroll(android, serialNumber: Self.revokedSerial)
        #expect(refused.status == 401 && refused.bodyText == #"{"error":"invalid_attestation"}"#)
        #expect(android.metrics.androidAttestations.count(.refused(.revoked)) == 1)
        try android.enroll(try android.makeDevice())
        #expect(try android.lifecycle.rowCounts()["installations"] == 1)

        // The age metric follows the fetched list.
        clock.advance(seconds: 120)
        let metrics = try android.lifecycle.gateway.get("/metrics").bodyText
        #expect(metrics.contains("\npush_gateway_android_status_list_age_seconds 120\n"))
    }

    @Test(
        "a 500, a body that is no status list and an unreachable URL keep the last good list until it is 24 h old; then Android enrollment answers 503 while iOS enrollment works"
    )
    func failedFetchesKeepTheList() throws {
        let server = try StatusListTestServer(body: Self.revokingList)
        let clock = LifecycleTestClock()
        let android = try Self.gateway(fetchingFrom: server, clock: clock)
        let fetcher = try #require(android.lifecycle.server.application.statusListFetcher)

        clock.advance(seconds: 3600)
        try server.serve(status: 500, body: #"{"error":"internal"}"#)
        fetcher.fetchNow()
        try server.serve(status: 200, body: "<html>not a status list</html>")
        fetcher.fetchNow()
        #expect(server.requestCount == 3)
        server.stop()
        fetcher.fetchNow()

        // Still the list of the first fetch: its age grew, and its serial is still refused.
        #expect(android.statusAge == 3600)
        let refused = try Self.enroll(android, serialNumber: Self.revokedSerial)
        #expect(refused.status == 401)
        #expect(android.metrics.androidAttestations.count(.refused(.revoked)) == 1)

        clock.advance(seconds: 86_400 - 3600 + 1)
        let stale = try Self.enroll(android, serialNumber: 1)
        #expect(stale.status == 503 && stale.bodyText == #"{"error":"temporarily_unavailable"}"#)
        #expect(try android.lifecycle.rowCounts()["installations"] ?? 0 == 0)
        try android.lifecycle.enroll(try android.lifecycle.makeDevice())
        #expect(try android.lifecycle.rowCounts()["installations"] == 1)
    }

    @Test(
        "building the gateway fetches nothing; starting the fetcher as a service fetches at once on the runtime, without a thread of its own, and stopping it ends the fetches and leaves the runtime running"
    )
    func fetcherIsAServiceTheApplicationStarts() throws {
        let server = try StatusListTestServer(body: Self.revokingList)
        let environment = try ConfigurationTestEnvironment()
            .withAndroidProfile(authority: try SyntheticKeyAttestationAuthority(), statusList: nil)
            .with("PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_URL", server.url)
            .with("PUSH_GATEWAY_FCM_CA_FILE", try StatusListTestServer.caFile)
        let gateway = try TestGateway(listening: false) { _ in environment }
        let fetcher = try #require(gateway.application.statusListFetcher)
        #expect(server.requestCount == 0)

        fetcher.start()
        #expect(eventually(within: 20) { server.requestCount == 1 }, "the fetch at start did not arrive")
        // The thread the fetcher had before the shared runtime (other suites' threads may come and go).
        #expect(!(try Self.threadNames()).contains("status-list"), "the fetcher started a thread of its own")
        fetcher.stop()
        #expect(server.requestCount == 1)
        let loopRuns = CompletionLatch()
        #expect(gateway.application.runtime.loops.next().execute { loopRuns.open() })
        #expect(loopRuns.wait(until: MonotonicInstant.now().advanced(by: .seconds(30))))
    }

    /// The names of this process's threads.
    static func threadNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        }
    }

    @Test("the fetch goes through the egress proxy's CONNECT tunnel; a proxy that is gone keeps the list")
    func fetchThroughEgressProxy() throws {
        let server = try StatusListTestServer(body: Self.revokingList)
        let proxy = try TinyProxy(connectPort: server.port)
        let clock = LifecycleTestClock()
        let android = try Self.gateway(fetchingFrom: server, through: proxy, clock: clock)
        #expect(proxy.log.contains("127.0.0.1:\(server.port)"))
        #expect(server.requestCount == 1)
        let refused = try Self.enroll(android, serialNumber: Self.revokedSerial)
        #expect(refused.status == 401)
        #expect(android.metrics.androidAttestations.count(.refused(.revoked)) == 1)

        proxy.stop()
        clock.advance(seconds: 3600)
        try #require(android.lifecycle.server.application.statusListFetcher).fetchNow()
        #expect(server.requestCount == 1)
        #expect(android.statusAge == 3600)
    }
}

extension AndroidLifecycleGateway {
    /// The age of the status list in use; nil while there is none.
    var statusAge: Int64? {
        lifecycle.server.application.lifecycle.android.statusList.ageSeconds(at: lifecycle.clock.unixSeconds())
    }
}

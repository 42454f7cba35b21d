import APNsMock
import Glibc
import PushAPNs
import PushCrypto
import PushHTTP
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayAPI
@testable import GatewayCredentials
@testable import PushGateway

/// Lowercase hex, as APNs paths and the mock's per-token script spell device tokens.
private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { byte in
        let text = String(byte, radix: 16)
        return byte < 16 ? "0" + text : text
    }.joined()
}

/// One signed delivery written to its own connection; the answer is read later.
private struct PendingDelivery {
    let requestID: CanonicalUUID
    let expiresAt: Int64
    let connection: HTTPTestClient

    init(_ scenario: DeliveryScenario, port: Int) throws {
        requestID = try CanonicalUUID.version4()
        expiresAt = DeliveryTestGateway.now() + 60
        let body = DeliveryTestGateway.body(grant: scenario.sealedGrant, requestID: requestID, expiresAt: expiresAt)
        let client = DeliveryClient(port: port)
        let header = try DeliveryTestGateway.authorization(key: scenario.relay, url: client.directURL, body: body)
        let path = GatewayRoute.deliveries.path
        connection = try HTTPTestClient(port: port, timeout: .seconds(10))
        try connection.send(
            Array(
                ("POST \(path) HTTP/1.1\r\nHost: \(DeliveryTestGateway.host)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
                    + "Authorization: \(header)\r\n\r\n").utf8) + body)
    }
}

/// A gateway with one worker that sends through the real APNs client to apns-mock, where every
/// request for `slow`'s token waits `delayMilliseconds` before its 200; `queued` is answered at once.
private struct SlowAPNsGateway {
    let gateway: DeliveryTestGateway
    let slow: DeliveryScenario
    let queued: DeliveryScenario
    let apns: APNsMockGateway

    var server: GatewayServer { apns.server }

    init(delayMilliseconds: Int, requestTimeout: Duration) throws {
        // The database, the keys and the enrollment come from the usual in-process gateway; the
        // gateway under test shares them and sends through the real APNs client to apns-mock.
        gateway = try DeliveryTestGateway { $0.with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "1000000") }
        slow = try gateway.enroll()
        queued = try gateway.enroll()
        apns = try APNsMockGateway(
            base: gateway,
            script: APNsMockScript(perToken: [hex(slow.token): [APNsMockReply(delayMilliseconds: delayMilliseconds)]]),
            tuning: {
                $0.workerCount = 1
                $0.requestTimeout = requestTimeout
            })
    }

    /// Requests apns-mock received for `scenario`'s token.
    func sentToAPNs(_ scenario: DeliveryScenario) -> Int {
        apns.mock.records.filter { $0.field(":path") == "/3/device/\(hex(scenario.token))" }.count
    }

    func stop() { apns.stop() }
}

@Suite("Deliveries past their 408 never begin (security finding 3)", .tags(.postgres, .slow), .testBodyThreads)
struct DeliveryDeadlineTests {
    @Test(
        "deliveries queued behind a slow APNs answer past their 408 are never admitted or sent, and the relay's retry is admitted"
    )
    func queuedDeliveriesPastTheirDeadline() throws {
        // One worker and a 2 s request timeout. No route parks a worker on a push
        // (docs/decisions/0271), so a provider whose first submission blocks its caller for 3 s
        // holds the one worker instead.
        let holdFirst = Atomic<Bool>(true)
        let provider = ScriptedProvider { _ in
            if holdFirst.exchange(false, ordering: .acquiringAndReleasing) { ThreadSleep.sleep(for: .seconds(3)) }
        }
        let gateway = try DeliveryTestGateway(
            sender: provider, { $0.with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "1000000") },
            requestTimeout: .seconds(2), tuning: { $0.workerCount = 1 })
        let (server, slow, queued) = (gateway.server, try gateway.enroll(), try gateway.enroll())
        let sentToAPNs = { (scenario: DeliveryScenario) in
            provider.attempts.filter { $0.deviceToken == scenario.token }.count
        }

        let blocking = try PendingDelivery(slow, port: server.publicPort)
        // Let the worker take it before the others queue behind it.
        var pause = timespec(tv_sec: 0, tv_nsec: 300_000_000)
        nanosleep(&pause, nil)
        let waiting = try (0..<4).map { _ in try PendingDelivery(queued, port: server.publicPort) }
        #expect(eventually(within: 2) { server.publicServer.queuedRequestCount == 4 })

        // The admitted one was begun in time and finishes in the background (docs/protocol.md §1).
        #expect(try blocking.connection.readResponse().status == 408)
        for delivery in waiting {
            let response = try delivery.connection.readResponse()
            #expect(response.status == 408)
            #expect(response.bodyText == #"{"error":"request_timeout"}"#)
        }
        // Once the slow submission frees the worker, the queued items are dropped, not run.
        #expect(eventually(within: 5) { sentToAPNs(slow) == 1 && server.publicServer.queuedRequestCount == 0 })
        nanosleep(&pause, nil)
        #expect(sentToAPNs(queued) == 0)
        for delivery in waiting { #expect(try !gateway.isReserved(queued, delivery.requestID)) }

        // The relay retries each 408'd request id as it was: admitted now, and sent exactly once.
        let client = DeliveryClient(port: server.publicPort)
        var accepted = 0
        for delivery in waiting {
            let retry = try client.deliver(
                queued, requestID: delivery.requestID, expiresAt: delivery.expiresAt,
                createdAt: DeliveryTestGateway.now() - 1)
            #expect(retry.status == 200, "\(retry.status) \(retry.bodyText)")
            if retry.status == 200 { accepted += 1 }
        }
        #expect(sentToAPNs(queued) == accepted)
        #expect(accepted == waiting.count)
    }

    @Test("a delivery whose deadline passed before its admission transaction is not admitted, charged or sent")
    func deadlineCheckedBeforeAdmission() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        let router = Router(gateway.server.application.routes(on: .publicListener))
        func delivery(deadline: MonotonicInstant) throws -> (Response, CanonicalUUID) {
            let requestID = try CanonicalUUID.version4()
            let body = DeliveryTestGateway.body(
                grant: scenario.sealedGrant, requestID: requestID, expiresAt: DeliveryTestGateway.now() + 60)
            let authorization = try DeliveryTestGateway.authorization(
                key: scenario.relay, url: gateway.directURL, body: body)
            let head = RequestHead(
                method: "POST", target: GatewayRoute.deliveries.path,
                headers: HTTPHeaders([
                    ("Host", DeliveryTestGateway.host), ("Content-Type", "application/json"),
                    ("Authorization", authorization),
                ]), contentLength: body.count)
            guard case .handle(let route) = router.decide(head) else { throw TestSupportError("no delivery route") }
            let request = Request(head: head, body: body, firstByteAt: .now(), deadline: deadline)
            return (route.handler(request), requestID)
        }

        let (late, lateID) = try delivery(deadline: .now())
        #expect(late.status == 408)
        #expect(gateway.sender.callCount == 0)
        #expect(try !gateway.isReserved(scenario, lateID))
        let (inTime, inTimeID) = try delivery(deadline: MonotonicInstant.now().advanced(by: .seconds(20)))
        #expect(inTime.status == 200)
        #expect(gateway.sender.callCount == 1)
        #expect(try gateway.isReserved(scenario, inTimeID))
    }

    @Test(
        "a delivery waiting on a slow APNs answer holds no worker: with one worker, another delivery is answered meanwhile"
    )
    func slowAPNsHoldsNoWorker() throws {
        let rig = try SlowAPNsGateway(delayMilliseconds: 3000, requestTimeout: .seconds(10))
        defer { rig.stop() }
        let waiting = try PendingDelivery(rig.slow, port: rig.server.publicPort)
        #expect(eventually(within: 2) { rig.sentToAPNs(rig.slow) == 1 })
        let other = try DeliveryClient(port: rig.server.publicPort).deliver(rig.queued)
        #expect(other.status == 200, "\(other.status) \(other.bodyText)")
        // The slow delivery is still owed its answer: nothing has arrived on its connection yet.
        waiting.connection.setReceiveTimeout(.milliseconds(200))
        #expect(throws: HTTPTestClientError.timedOut) { try waiting.connection.readResponse() }
        waiting.connection.setReceiveTimeout(.seconds(10))
        let answer = try waiting.connection.readResponse()
        #expect(answer.status == 200)
        #expect(answer.bodyText == #"{"status":"accepted"}"#)
        #expect(try rig.gateway.isReserved(rig.slow, waiting.requestID))
    }
}

import PushSystem
import Testing

@testable import PushHTTP

@Suite("Connection timeout rules (pure)")
struct ConnectionTimeoutTests {
    let configuration = HTTPServerConfiguration(listen: "127.0.0.1:0")
    let firstByte = MonotonicInstant(nanoseconds: 1_000_000_000)

    func decide(_ phase: Connection.Phase, after elapsed: Duration, draining: Bool = false) -> TimeoutDecision {
        phase.timeoutDecision(
            firstByteAt: firstByte, now: firstByte.advanced(by: elapsed), draining: draining,
            configuration: configuration)
    }

    @Test("the head must be complete 10 s after the first byte")
    func headerTimeout() {
        #expect(decide(.readingHead, after: .milliseconds(9999)) == .keep)
        #expect(decide(.readingHead, after: .seconds(10)) == .requestTimeout)
    }

    @Test("body and handler must be done 20 s after the first byte")
    func requestTimeout() {
        #expect(decide(.readingBody, after: .milliseconds(19999)) == .keep)
        #expect(decide(.readingBody, after: .seconds(20)) == .requestTimeout)
        #expect(decide(.processing, after: .seconds(19)) == .keep)
        #expect(decide(.processing, after: .seconds(20)) == .requestTimeout)
    }

    @Test("an idle keep-alive connection closes silently after 60 s, or at once while draining")
    func idle() {
        #expect(decide(.idle(since: firstByte), after: .seconds(59)) == .keep)
        #expect(decide(.idle(since: firstByte), after: .seconds(60)) == .close)
        #expect(decide(.idle(since: firstByte), after: .zero, draining: true) == .close)
        #expect(decide(.processing, after: .zero, draining: true) == .keep)
    }

    @Test("a stalled response write and a finished linger close without a response")
    func writingAndLingering() {
        #expect(decide(.writing(since: firstByte), after: .seconds(19)) == .keep)
        #expect(decide(.writing(since: firstByte), after: .seconds(20)) == .close)
        let until = firstByte.advanced(by: .seconds(2))
        #expect(decide(.lingering(until: until), after: .seconds(1)) == .keep)
        #expect(decide(.lingering(until: until), after: .seconds(2)) == .close)
    }
}

@Suite("Request construction for handler tests")
struct RequestConstructionTests {
    @Test("a head built directly splits path and query at the first question mark")
    func directHead() {
        let head = RequestHead(
            method: "POST", target: "/v1/a?x=1?y", headers: HTTPHeaders([("Content-Type", "application/json")]))
        let request = Request(head: head, body: Array("{}".utf8))
        #expect(request.path == "/v1/a")
        #expect(request.query == "x=1?y")
        #expect(request.target == "/v1/a?x=1?y")
        #expect(request.headers["content-type"] == "application/json")
        #expect(RequestHead(method: "GET", target: "/b").query == nil)
    }
}

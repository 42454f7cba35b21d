import PushSystem
import PushTestSupport
import Testing

@testable import PushWebPush

/// docs/protocol.md §4.7: refusals (401/403) are alerted on when several distinct origins answer
/// them at once, never one endpoint's answers; `RefusingOrigins` counts the distinct origins of the
/// last `window` (docs/decisions/0856).
@Suite("RefusingOrigins: distinct origins that refused the VAPID credential within the window", .testBodyThreads)
struct RefusingOriginsTests {
    static let start = MonotonicInstant(nanoseconds: 1_000_000_000_000)

    static func at(seconds: Int64) -> MonotonicInstant { start.advanced(by: .seconds(seconds)) }

    @Test("one origin refusing again and again counts once; each distinct origin counts")
    func distinctOrigins() {
        let refusals = RefusingOrigins()
        #expect(refusals.count(at: Self.start) == 0)
        for second in 0..<5 { refusals.record("https://push.example.org", at: Self.at(seconds: Int64(second))) }
        #expect(refusals.count(at: Self.at(seconds: 5)) == 1)
        refusals.record("https://up.example.net", at: Self.at(seconds: 6))
        refusals.record("https://push.example.org:8443", at: Self.at(seconds: 7))
        #expect(refusals.count(at: Self.at(seconds: 8)) == 3)
    }

    @Test("an origin leaves the count a window after its latest refusal, not its first")
    func window() {
        let refusals = RefusingOrigins()
        let window = Int64(RefusingOrigins.window.components.seconds)
        refusals.record("https://a.example", at: Self.at(seconds: 0))
        refusals.record("https://b.example", at: Self.at(seconds: 100))
        refusals.record("https://a.example", at: Self.at(seconds: 200))
        #expect(refusals.count(at: Self.at(seconds: window + 99)) == 2)
        #expect(refusals.count(at: Self.at(seconds: window + 100)) == 1, "b's only refusal left the window")
        #expect(refusals.count(at: Self.at(seconds: window + 199)) == 1)
        #expect(refusals.count(at: Self.at(seconds: window + 200)) == 0)
    }

    @Test("the table is bounded: past its capacity the least recent origin is forgotten")
    func bounded() {
        let refusals = RefusingOrigins(capacity: 2)
        for (index, origin) in ["https://a.example", "https://b.example", "https://c.example"].enumerated() {
            refusals.record(origin, at: Self.at(seconds: Int64(index)))
        }
        #expect(refusals.count(at: Self.at(seconds: 3)) == 2)
    }
}

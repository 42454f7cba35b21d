import PushSystem
import PushTestSupport
import Testing

@Suite("BlockingCall: a completion-handler call made blocking, shared by the APNs and FCM clients", .testBodyThreads)
struct BlockingCallTests {
    @Test("the value completed on another thread is returned")
    func completedElsewhere() throws {
        let value = BlockingCall.result(within: .seconds(10)) { (completion: @escaping @Sendable (Int) -> Void) in
            _ = try? PosixThread.spawn { completion(42) }
        }
        #expect(value == 42)
    }

    @Test("a call that never completes yields nil once the bound has passed")
    func neverCompleted() {
        let started = MonotonicInstant.now()
        let value = BlockingCall.result(within: .milliseconds(50)) { (_: @escaping @Sendable (Int) -> Void) in }
        #expect(value == nil)
        #expect(MonotonicInstant.now() >= started.advanced(by: .milliseconds(50)))
    }
}

import PushSystem
import Synchronization

/// A thread-safe HTTP/2 client: any thread submits requests; one `EventLoop`, the caller's, owns
/// every connection and calls each completion exactly once, on that loop's thread, so completions
/// must be short. The loop is shared with other users (the application's runtime,
/// docs/decisions/0870): the client never ends it. Reusable by any HTTP/2 API client (APNs, FCM).
public final class HTTP2Client: Sendable {
    public let configuration: HTTP2ClientConfiguration
    public let loop: EventLoop
    private let driver: LoopBound<HTTP2ClientDriver>
    private let accepting = Atomic<Bool>(true)

    /// A client whose connections, timers and completions run on `loop` (a runtime's loop, or a
    /// manual loop in tests).
    public init(configuration: HTTP2ClientConfiguration, on loop: EventLoop) {
        // TLS writes with write(2); a peer that vanished must give EPIPE, not kill the process.
        ProcessSignals.ignoreBrokenPipe()
        self.configuration = configuration
        self.loop = loop
        driver = LoopBound(HTTP2ClientDriver(configuration: configuration, loop: loop), on: loop)
    }

    /// Queues a request; `completion` runs on the event-loop thread with the response or the
    /// failure: at the latest `connectionWaitTimeout` after this call if no connection takes it,
    /// else `requestTimeout` after its stream was submitted (docs/decisions/0170).
    public func submit(
        _ request: HTTP2Request, to target: HTTP2Target,
        completion: @escaping @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void
    ) {
        guard accepting.load(ordering: .acquiring) else {
            completion(.failure(HTTP2Error(.shutdown)))
            return
        }
        let pending = HTTP2PendingRequest(target: target, request: request, completion: completion)
        let driver = self.driver
        if !loop.execute({ driver.value.submit(pending) }) { completion(.failure(HTTP2Error(.shutdown))) }
    }

    /// Stops accepting requests, answers every pending one with `.shutdown` and closes every
    /// connection, on the loop, and returns once that is done. The loop keeps running; the timers
    /// the driver leaves on it find it shut down and do nothing. If the loop has already ended,
    /// nothing is left to answer.
    public func shutdown() {
        guard accepting.exchange(false, ordering: .acquiringAndReleasing) else { return }
        let driver = self.driver
        guard !loop.inEventLoop else {
            driver.value.shutdown()
            return
        }
        let done = CompletionLatch()
        if loop.execute({
            driver.value.shutdown()
            done.open()
        }) {
            done.wait()
        }
    }
}

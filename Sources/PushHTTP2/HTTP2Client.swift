import PushSystem
import Synchronization

/// A thread-safe HTTP/2 client: any thread submits requests; one `EventLoop` owns every
/// connection and calls each completion exactly once, on that loop's thread, so completions must
/// be short. Reusable by any HTTP/2 API client (APNs, FCM).
public final class HTTP2Client: Sendable {
    public let configuration: HTTP2ClientConfiguration
    private let loop: EventLoop
    private let driver: LoopBound<HTTP2ClientDriver>
    private let accepting = Atomic<Bool>(true)

    /// Starts the client's event loop, its thread named `threadName` (an APNs or FCM client names its own).
    public init(configuration: HTTP2ClientConfiguration, threadName: String = "http2-client") throws(SystemError) {
        // TLS writes with write(2); a peer that vanished must give EPIPE, not kill the process.
        ProcessSignals.ignoreBrokenPipe()
        self.configuration = configuration
        loop = try EventLoop(name: threadName)
        driver = LoopBound(HTTP2ClientDriver(configuration: configuration, loop: loop), on: loop)
    }

    /// A client on `loop` (a manual loop in tests); `shutdown` ends the loop.
    init(configuration: HTTP2ClientConfiguration, loop: EventLoop) {
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

    /// Stops accepting requests, answers every pending one with `.shutdown`, closes connections
    /// and waits for the event loop to end.
    public func shutdown() {
        guard accepting.exchange(false, ordering: .acquiringAndReleasing) else { return }
        let driver = self.driver
        loop.execute { driver.value.shutdown() }
        loop.shutdown()
    }
}

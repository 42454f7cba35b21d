import PushSystem
import Synchronization

/// A thread-safe HTTP/2 client: any thread submits requests; one event-loop thread
/// (`HTTP2EventLoop`) owns every connection and calls each completion exactly once, on that
/// thread, so completions must be short. Reusable by any HTTP/2 API client (APNs, FCM).
public final class HTTP2Client: Sendable {
    enum Command: Sendable {
        case submit(HTTP2PendingRequest)
        case resolved(HTTP2PoolKey, HTTP2ConnectionID, Result<[SocketAddress], SystemError>)
        case shutdown
    }

    public let configuration: HTTP2ClientConfiguration
    let notifier: EventNotifier
    private let inbox = Mutex<[Command]>([])
    private let accepting = Atomic<Bool>(true)
    private let thread = Mutex<PosixThread?>(nil)

    public init(configuration: HTTP2ClientConfiguration) throws(SystemError) {
        // TLS writes with write(2); a peer that vanished must give EPIPE, not kill the process.
        ProcessSignals.ignoreBrokenPipe()
        self.configuration = configuration
        self.notifier = try EventNotifier()
        let loop = try HTTP2EventLoop(client: self)
        let started = try PosixThread.spawn { loop.run() }
        thread.withLock { $0 = started }
    }

    /// Queues a request; `completion` runs on the event-loop thread with the response or the
    /// failure: at the latest `connectionWaitTimeout` after this call if no connection takes it,
    /// else `requestTimeout` after its stream was submitted (docs/decisions/0170).
    public func submit(
        _ request: HTTP2Request, to target: HTTP2Target,
        completion: @escaping @Sendable (Result<HTTP2Response, HTTP2Failure>) -> Void
    ) {
        guard accepting.load(ordering: .acquiring) else {
            completion(.failure(.shutdown))
            return
        }
        post(.submit(HTTP2PendingRequest(target: target, request: request, completion: completion)))
    }

    func post(_ command: Command) {
        inbox.withLock { $0.append(command) }
        notifier.notify()
    }

    func takeCommands() -> [Command] {
        inbox.withLock { commands in
            defer { commands.removeAll(keepingCapacity: true) }
            return commands
        }
    }

    /// Stops accepting requests, answers every pending one with `.shutdown`, closes connections
    /// and waits for the event-loop thread to end.
    public func shutdown() {
        guard accepting.exchange(false, ordering: .acquiringAndReleasing) else { return }
        post(.shutdown)
        thread.withLock { $0 }?.join()
    }
}

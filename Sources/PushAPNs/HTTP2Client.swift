import Foundation
import Synchronization

/// The thread-safe face of the HTTP/2 client: worker threads submit requests, one I/O thread
/// (`HTTP2EventLoop`) owns every connection and calls each completion exactly once, on the I/O
/// thread, so completions must be short.
final class HTTP2Client: Sendable {
    enum Command: Sendable {
        case submit(HTTP2PendingRequest)
        case resolved(connectionID: Int, Result<[SocketAddress], SocketError>)
        case shutdown
    }

    let configuration: HTTP2ClientConfiguration
    let wake: WakeSignal
    private let inbox = Mutex<[Command]>([])
    private let accepting = Atomic<Bool>(true)
    private let loopFinished = Mutex<Bool>(false)

    init(configuration: HTTP2ClientConfiguration) throws(SocketError) {
        // OpenSSL writes with write(2); a peer that vanished must give EPIPE, not kill the process.
        signal(SIGPIPE, SIG_IGN)
        self.configuration = configuration
        self.wake = try WakeSignal()
        let thread = Thread { [self] in
            HTTP2EventLoop(client: self).run()
            loopFinished.withLock { $0 = true }
        }
        thread.name = "apns-io"
        thread.start()
    }

    /// Queues a request; `completion` runs on the I/O thread with the response or the failure, at
    /// the latest at `timeout` after this call.
    func submit(
        _ request: HTTP2Request, to target: HTTP2Target, timeout: Duration,
        completion: @escaping @Sendable (Result<HTTP2Response, HTTP2Failure>) -> Void
    ) {
        guard accepting.load(ordering: .acquiring) else {
            completion(.failure(.shutdown))
            return
        }
        let pending = HTTP2PendingRequest(
            target: target, request: request, deadline: .now + timeout, unprocessedRetryUsed: false,
            completion: completion)
        post(.submit(pending))
    }

    func post(_ command: Command) {
        inbox.withLock { $0.append(command) }
        wake.signal()
    }

    func takeCommands() -> [Command] {
        inbox.withLock { commands in
            defer { commands.removeAll(keepingCapacity: true) }
            return commands
        }
    }

    /// Stops accepting requests, answers every pending one with `.shutdown`, closes connections
    /// and waits for the I/O thread to end.
    func shutdown() {
        guard accepting.exchange(false, ordering: .acquiringAndReleasing) else { return }
        post(.shutdown)
        while !loopFinished.withLock({ $0 }) { usleep(1_000) }
    }
}

import PushSystem
import Synchronization

/// The one answer a deferred route still owes its request (docs/decisions/0270). The handler
/// returns its worker at once; whichever thread later has the response completes it here, and the
/// response goes straight into the inbox of the event loop that owns the connection, as a worker's
/// does, where an answer after the request's 408 is dropped (docs/protocol.md §1). Only the first
/// completion counts.
public final class Responder: Sendable {
    enum Target: Sendable {
        /// The request came in on a connection of `owner`.
        case connection(connectionID: UInt64, serial: UInt64)
        /// A caller blocks on its own thread for the answer (`Route.handler` of a deferred route).
        case waiter(SynchronousAnswer)
    }

    private let target: Target
    /// The loop owning the connection, held weakly: a responder kept after its answer (by a handler,
    /// a pending push, a test) must not keep a drained server and everything it owns alive
    /// (docs/reliability.md, "Sanitizers"). While the server runs, it keeps its loops alive.
    private weak let owner: ConnectionLoop?
    private let completed = Atomic<Bool>(false)

    init(owner: ConnectionLoop, connectionID: UInt64, serial: UInt64) {
        target = .connection(connectionID: connectionID, serial: serial)
        self.owner = owner
    }

    private init(waiter: SynchronousAnswer) {
        target = .waiter(waiter)
        owner = nil
    }

    /// Answers the request; any thread, never blocks. Later calls are ignored.
    public func complete(_ response: Response) {
        guard !completed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        switch target {
        case .connection(let connectionID, let serial):
            // A loop already gone has closed every connection: there is nobody left to answer.
            owner?.post(WorkCompletion(connectionID: connectionID, serial: serial, response: response))
        case .waiter(let answer):
            answer.complete(response)
        }
    }

    /// Runs `work` on a worker thread: blocking work (the database) that a completion arriving on a
    /// thread that must never block (an I/O thread) still has to do before it answers.
    public func resume(_ work: @escaping @Sendable () -> Void) {
        switch target {
        case .connection: owner?.server.resume(work)
        case .waiter(let answer): answer.run(work)
        }
    }

    // A handler that lets go of its responder without answering is a bug; its client still gets an
    // answer now instead of a 408 later.
    deinit { complete(.error(503, .temporarilyUnavailable)) }

    /// Runs a deferred handler and blocks the calling thread until it answers; work handed to
    /// `resume` meanwhile runs on this thread too.
    static func awaitAnswer(_ handler: (Responder) -> Void) -> Response {
        let answer = SynchronousAnswer()
        handler(Responder(waiter: answer))
        return answer.wait()
    }
}

/// The answer of a deferred handler for a caller waiting on its own thread.
// @unchecked Sendable: `response` and `work` are touched only under `lock`, which this class owns.
final class SynchronousAnswer: @unchecked Sendable {
    private let lock = ConditionLock()
    private var response: Response? = nil
    private var work: [@Sendable () -> Void] = []

    func complete(_ response: Response) {
        lock.withLock {
            self.response = response
            lock.signal()
        }
    }

    func run(_ work: @escaping @Sendable () -> Void) {
        lock.withLock {
            self.work.append(work)
            lock.signal()
        }
    }

    func wait() -> Response {
        while true {
            let (pending, answer) = lock.withLock { () -> ([@Sendable () -> Void], Response?) in
                while response == nil && work.isEmpty { lock.wait() }
                let pending = work
                work.removeAll()
                // Handed-over work runs before the answer is taken: it may still complete it.
                return (pending, pending.isEmpty ? response : nil)
            }
            if let answer { return answer }
            for item in pending { item() }
        }
    }
}

import PushSystem

/// One accepted client connection, owned by the event-loop thread (never shared).
final class Connection {
    /// Where the connection is in its request/response cycle.
    enum Phase {
        /// Waiting for the first byte of the next request; closed silently after the idle timeout.
        case idle(since: MonotonicInstant)
        /// Reading the head; 408 after the header timeout.
        case readingHead
        /// Reading the body; 408 after the request timeout.
        case readingBody
        /// A worker runs the handler; 408 after the request timeout (its response is then dropped).
        case processing
        /// The response is partly written; the socket was not writable.
        case writing(since: MonotonicInstant)
        /// A closing response was sent and our side shut down; unread client bytes are discarded.
        case lingering(until: MonotonicInstant)
    }

    let id: UInt64
    let socket: FileDescriptor
    let peer: String
    var parser: HTTPRequestParser
    var phase: Phase
    var interest: EpollEvents
    var isClosed = false

    /// Received bytes; those before `inputStart` are consumed.
    var input: [UInt8] = []
    var inputStart = 0
    /// Encoded response bytes; those before `outputStart` are sent.
    var output: [UInt8] = []
    var outputStart = 0
    var closeAfterWrite = false

    /// The request in progress. `serial` tells a late worker response from the current one.
    var serial: UInt64 = 0
    var firstByteAt: MonotonicInstant
    var routeLabel = Router.unknownLabel
    var methodLabel = "unknown"
    var keepAlive = true
    var isHTTP10 = false

    init(
        id: UInt64, socket: consuming FileDescriptor, peer: String, parser: HTTPRequestParser,
        now: MonotonicInstant, interest: EpollEvents
    ) {
        self.id = id
        self.socket = socket
        self.peer = peer
        self.parser = parser
        self.phase = .idle(since: now)
        self.firstByteAt = now
        self.interest = interest
    }

    /// Resets per-request fields when the first byte of a new request is seen.
    func beginRequest(at now: MonotonicInstant) {
        phase = .readingHead
        firstByteAt = now
        routeLabel = Router.unknownLabel
        methodLabel = "unknown"
        keepAlive = true
        isHTTP10 = false
    }

    /// Drops consumed input, keeping capacity for the next read.
    func compactInput() {
        if inputStart == input.count {
            input.removeAll(keepingCapacity: true)
            inputStart = 0
        } else if inputStart > 32 * 1024 {
            input.removeSubrange(0..<inputStart)
            inputStart = 0
        }
    }
}

/// What the periodic sweep does with a connection.
enum TimeoutDecision: Equatable {
    case keep
    /// Idle past the idle timeout (or idle while draining), a stalled writer, or linger over: close
    /// without a response.
    case close
    /// PROTOCOL.md §1: head late, or request (read + handler) late → 408 `request_timeout` and close.
    case requestTimeout
}

extension Connection.Phase {
    /// Pure timeout rule of PROTOCOL.md §1, decided from the phase and the clock alone.
    func timeoutDecision(
        firstByteAt: MonotonicInstant, now: MonotonicInstant, draining: Bool, configuration: HTTPServerConfiguration
    ) -> TimeoutDecision {
        let sinceFirstByte = firstByteAt.duration(to: now)
        switch self {
        case .idle(let since):
            return draining || since.duration(to: now) >= configuration.idleTimeout ? .close : .keep
        case .readingHead:
            return sinceFirstByte >= configuration.headerTimeout ? .requestTimeout : .keep
        case .readingBody, .processing:
            return sinceFirstByte >= configuration.requestTimeout ? .requestTimeout : .keep
        case .writing(let since):
            // A client that stops reading its response cannot hold the connection forever.
            return since.duration(to: now) >= configuration.requestTimeout ? .close : .keep
        case .lingering(let until):
            return now >= until ? .close : .keep
        }
    }
}

import PushSystem

/// Who an accepted connection is, from the accept until it closes: set once by the acceptor, carried
/// through the handover between loops and kept by the loop that serves it.
struct ConnectionIdentity: Sendable, Equatable {
    /// Never reused: a closed connection's late response is dropped by it (docs/protocol.md §1).
    let id: UInt64
    let peer: String
    /// What the per-peer cap counts `peer` as (docs/protocol.md §1).
    let peerGroup: PeerGroup
}

/// One accepted client connection, owned by the event-loop thread (never shared): the socket, its
/// buffers and its state machine, which alone decides what happens next.
final class Connection {
    let identity: ConnectionIdentity
    let socket: FileDescriptor
    var parser: HTTPRequestParser
    var machine: HTTPConnectionStateMachine
    var interest: EpollEvents
    /// The socket's registration with the event loop, set right after accepting.
    var registration: EventLoop.Registration?

    /// Received bytes; those before `inputStart` are consumed.
    var input: [UInt8] = []
    var inputStart = 0
    /// Encoded response bytes; those before `outputStart` are sent.
    var output: [UInt8] = []
    var outputStart = 0

    /// The start of the last request entered in its loop's `GiveUpIndex` as incomplete, so each
    /// request is entered once however many reads it takes.
    var indexedRequestStart: MonotonicInstant?

    /// For the access log and the response encoding of the request in progress.
    var routeLabel = Router.unknownLabel
    var methodLabel = "unknown"
    var isHTTP10 = false

    /// Takes over `arriving`'s descriptor: from here on the connection owns and closes it.
    init(
        adopting arriving: ArrivingConnection, parser: HTTPRequestParser,
        timeouts: HTTPConnectionStateMachine.Timeouts, interest: EpollEvents
    ) {
        identity = arriving.identity
        socket = FileDescriptor(owning: arriving.descriptor)
        self.parser = parser
        machine = HTTPConnectionStateMachine(acceptedAt: arriving.acceptedAt, timeouts: timeouts)
        self.interest = interest
    }

    var isClosed: Bool { machine.state == .closed }
    var hasBufferedInput: Bool { inputStart < input.count }

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

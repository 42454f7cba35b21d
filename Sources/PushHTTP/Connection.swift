import PushSystem

/// One accepted client connection, owned by the event-loop thread (never shared): the socket, its
/// buffers and its state machine, which alone decides what happens next.
final class Connection {
    let id: UInt64
    let socket: FileDescriptor
    let peer: String
    /// What the per-peer cap counts `peer` as (docs/protocol.md §1).
    let peerGroup: PeerGroup
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

    /// For the access log and the response encoding of the request in progress.
    var routeLabel = Router.unknownLabel
    var methodLabel = "unknown"
    var isHTTP10 = false

    init(
        id: UInt64, socket: consuming FileDescriptor, peer: String, peerGroup: PeerGroup, parser: HTTPRequestParser,
        machine: HTTPConnectionStateMachine, interest: EpollEvents
    ) {
        self.id = id
        self.socket = socket
        self.peer = peer
        self.peerGroup = peerGroup
        self.parser = parser
        self.machine = machine
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

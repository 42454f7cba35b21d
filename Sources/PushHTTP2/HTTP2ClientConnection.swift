import PushCrypto
import PushDial
import PushSystem

/// The I/O of one HTTP/2 client connection, confined to the client's event-loop thread: the
/// `ClientDial` (TCP connect, proxy tunnel, TLS handshake), and an `HTTP2Session` in the client role. It
/// decides nothing: what it sees goes into `reports` for the state machine, and it carries out
/// what the event loop tells it.
final class HTTP2ClientConnection: HTTP2SessionDelegate {
    /// What the state machine must hear about, in the order it happened.
    enum Report: Equatable {
        case settings(maximumConcurrentStreams: Int)
        case streamEnded(Int32, HTTP2ClientConnectionStateMachine.StreamEnd)
        case goAway(lastStreamID: Int32)
        case pingAcknowledged
        case activity
        case closed(HTTP2Error)
    }

    private enum Stage {
        case dialing
        case open
        case closed
    }

    private final class ResponseBuffer {
        var status: Int?
        var headers: [HTTPField] = []
        var body: [UInt8] = []
    }

    static let maximumResponseBody = 65_536

    let id: HTTP2ConnectionID
    let target: HTTP2Target
    private let dial: ClientDial
    private var stage = Stage.dialing
    private var session: HTTP2Session?
    private var responses: [Int32: ResponseBuffer] = [:]
    private var wantsWrite = false
    private var readBuffer = [UInt8](repeating: 0, count: 16_384)
    private(set) var reports: [Report] = []

    init(id: HTTP2ConnectionID, target: HTTP2Target, proxy: EgressProxy?) {
        self.id = id
        self.target = target
        dial = ClientDial(host: target.host, port: target.port, proxy: proxy, tlsContext: target.tls)
    }

    var proxy: EgressProxy? { dial.proxy }
    /// Where the TCP connection goes: the proxy when there is one, else the target.
    var connectHost: String { dial.connectHost }
    var connectPort: UInt16 { dial.connectPort }
    /// The socket's raw descriptor while one is open (for epoll), else -1.
    var descriptor: Int32 { dial.descriptor }

    /// The readiness the event loop must wait for; nil when there is no socket to watch.
    var interest: EpollEvents? {
        switch stage {
        case .dialing: dial.interest
        case .open: wantsWrite ? [.readable, .writable] : .readable
        case .closed: nil
        }
    }

    func takeReports() -> [Report] {
        defer { reports.removeAll(keepingCapacity: true) }
        return reports
    }

    // MARK: Setup

    func addressesResolved(_ result: Result<[SocketAddress], SystemError>) {
        guard case .dialing = stage else { return }
        dialed(dial.resolved(result))
    }

    /// Handles readiness of the socket.
    func handle(_ events: EpollEvents) {
        switch stage {
        case .dialing:
            dialed(dial.handle(events))
        case .open:
            if !events.isDisjoint(with: [.readable, .hangup, .error, .readHangup]) { readAvailable() }
            flush()
        case .closed:
            break
        }
    }

    private func dialed(_ step: ClientDial.Step) {
        switch step {
        case .pending: break
        case .open: startSession()
        case .failed(let failure): fail(Self.error(for: failure, throughProxy: proxy != nil))
        }
    }

    /// docs/protocol.md §12: a proxy that refuses is a transient failure, like one that is down.
    private static func error(for failure: ClientDialFailure, throughProxy: Bool) -> HTTP2Error {
        switch failure {
        case .noAddress:
            HTTP2Error(.transport, detail: throughProxy ? "no address for the proxy" : "no address for the host")
        case .resolution(let error), .connectFailed(let error): HTTP2Error(.transport, detail: error.description)
        case .tunnel(let reason): HTTP2Error(.transport, detail: reason)
        case .tlsSetup(let error): HTTP2Error(.tlsConfiguration, detail: error.description)
        case .handshake(let error):
            switch error.code {
            case .certificateVerification, .alpnNotNegotiated, .configuration:
                HTTP2Error(.tlsConfiguration, detail: error.description)
            default:
                HTTP2Error(.transport, detail: error.description)
            }
        }
    }

    private func startSession() {
        do {
            // Servers never push to clients of this project; a large window lets responses flow.
            session = try HTTP2Session(
                role: .client, delegate: self, settings: [.enablePush(false), .initialWindowSize(1 << 20)])
        } catch {
            fail(HTTP2Error(.transport, detail: "HTTP/2 session setup failed"))
            return
        }
        stage = .open
        flush()
    }

    // MARK: Carrying out actions

    /// Opens a stream; nil when the session refused it. Frames leave with the next `flush()`, so
    /// a batch of submissions shares TLS writes.
    func submit(_ request: HTTP2Request) -> Int32? {
        guard let session else { return nil }
        var fields = [
            HTTPField(":method", request.method), HTTPField(":scheme", "https"), HTTPField(":path", request.path),
            HTTPField(":authority", target.authority),
        ]
        fields += request.headers
        guard let streamID = session.submitRequest(fields, body: request.body) else { return nil }
        responses[streamID] = ResponseBuffer()
        return streamID
    }

    func cancel(streamID: Int32) {
        responses[streamID] = nil
        session?.resetStream(streamID, errorCode: .cancel)
    }

    func ping() { _ = session?.ping() }

    /// The complete response of a stream the state machine declared succeeded.
    func takeResponse(streamID: Int32) -> HTTP2Response {
        let buffer = responses.removeValue(forKey: streamID)
        return HTTP2Response(status: buffer?.status ?? 0, headers: buffer?.headers ?? [], body: buffer?.body ?? [])
    }

    /// Closes the connection without reporting it (the state machine asked for it).
    func close() {
        guard !isClosed else { return }
        stage = .closed
        session = nil
        // Responses completed just before the close are still to be taken (they precede the
        // `.closed` report); they go with the connection.
        dial.close()
    }

    var isClosed: Bool {
        if case .closed = stage { true } else { false }
    }

    /// Moves the session's output to TLS until the socket would block.
    func flush() {
        guard let tls = dial.tls, let session, !isClosed else { return }
        switch session.flush(to: tls) {
        case .drained:
            wantsWrite = false
            if session.isFinished { fail(HTTP2Error(.transport, detail: "HTTP/2 session finished")) }
        case .wouldBlockOnWrite: wantsWrite = true
        case .wouldBlockOnRead: break
        case .closed: fail(HTTP2Error(.transport, detail: "connection closed by the server"))
        case .failed(let detail): fail(HTTP2Error(.transport, detail: detail))
        }
    }

    private func readAvailable() {
        guard let tls = dial.tls, let session else { return }
        var received = false
        while !isClosed {
            let result: TLSTransfer
            do {
                result = try readBuffer.withUnsafeMutableBytes { buffer throws(CryptoError) in
                    try tls.read(into: buffer)
                }
            } catch {
                fail(HTTP2Error(.transport, detail: "\(error)"))
                return
            }
            switch result {
            case .transferred(let count):
                if !received {
                    received = true
                    reports.append(.activity)
                }
                let accepted = readBuffer.withUnsafeBytes {
                    session.receive(UnsafeRawBufferPointer(rebasing: $0[..<count]))
                }
                guard accepted else {
                    fail(HTTP2Error(.transport, detail: "HTTP/2 protocol error"))
                    return
                }
            case .wantRead, .wantWrite:
                return
            case .closed:
                fail(HTTP2Error(.transport, detail: "connection closed by the server"))
                return
            }
        }
    }

    private func fail(_ failure: HTTP2Error) {
        guard !isClosed else { return }
        close()
        reports.append(.closed(failure))
    }

    // MARK: HTTP2SessionDelegate

    func session(_ session: HTTP2Session, openedStream streamID: Int32) {}

    func session(_ session: HTTP2Session, receivedHeader header: HTTPField, streamID: Int32) {
        guard let buffer = responses[streamID] else { return }
        if header.name == ":status" {
            buffer.status = Int(header.value)
        } else {
            buffer.headers.append(header)
        }
    }

    func session(_ session: HTTP2Session, receivedData bytes: UnsafeRawBufferPointer, streamID: Int32) {
        guard let buffer = responses[streamID] else { return }
        let room = Self.maximumResponseBody - buffer.body.count
        buffer.body.append(contentsOf: bytes.prefix(max(0, room)))
    }

    func session(_ session: HTTP2Session, peerEndedStream streamID: Int32) {}

    func session(_ session: HTTP2Session, closedStream streamID: Int32, errorCode: HTTP2ErrorCode) {
        guard let buffer = responses[streamID] else { return }
        if errorCode == .noError, buffer.status != nil {
            reports.append(.streamEnded(streamID, .response))
            return
        }
        responses[streamID] = nil
        // docs/protocol.md §8: REFUSED_STREAM before any response header means "never processed".
        let unprocessed = errorCode == .refusedStream && buffer.status == nil
        reports.append(.streamEnded(streamID, unprocessed ? .unprocessed : .reset))
    }

    func session(_ session: HTTP2Session, didNotSendStream streamID: Int32) {
        guard responses.removeValue(forKey: streamID) != nil else { return }
        reports.append(.streamEnded(streamID, .unprocessed))
    }

    func sessionReceivedSettings(_ session: HTTP2Session) {
        reports.append(.settings(maximumConcurrentStreams: session.remoteMaximumConcurrentStreams))
    }

    func session(_ session: HTTP2Session, receivedGoAway lastStreamID: Int32) {
        reports.append(.goAway(lastStreamID: lastStreamID))
    }

    func session(_ session: HTTP2Session, receivedPing isAcknowledgement: Bool) {
        if isAcknowledgement { reports.append(.pingAcknowledged) }
    }
}

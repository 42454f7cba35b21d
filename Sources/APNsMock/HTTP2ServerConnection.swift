import PushCrypto
import PushHTTP2
import PushSystem

/// The server side of one HTTP/2 connection over TLS, an `HTTP2Session` in the server role driven
/// by the one thread that owns it (apns-mock runs a thread per connection). Complete requests
/// collect in `completedRequests`; the owner answers them with `respond`, `refuse` or `goAway`.
final class HTTP2ServerConnection: HTTP2SessionDelegate {
    struct Request {
        let streamID: Int32
        /// Every header field in arrival order, pseudo-headers included.
        let fields: [HTTPField]
        let body: [UInt8]

        var method: String { fields.first { $0.name == ":method" }?.value ?? "" }
        var path: String { fields.first { $0.name == ":path" }?.value ?? "" }
        var regularHeaders: [HTTPField] { fields.filter { !$0.name.hasPrefix(":") } }
    }

    private final class Stream {
        var fields: [HTTPField] = []
        var body: [UInt8] = []
    }

    // Bodies beyond this are only counted, so a 413 can still be answered.
    static let maximumRecordedBody = 1 << 20

    private let socket: FileDescriptor
    /// Also read and written by `HTTP1ServerConnection` when ALPN chose HTTP/1.1 instead.
    let tls: TLSConnection
    private var session: HTTP2Session?
    private var streams: [Int32: Stream] = [:]
    private var readBuffer = [UInt8](repeating: 0, count: 16_384)
    private(set) var wantsWrite = false
    var completedRequests: [Request] = []
    /// Called with the number of open streams whenever a new one opens.
    var onStreamOpened: ((Int) -> Void)?
    /// Called for every PING the client sends (not for acknowledgements).
    var onPing: (() -> Void)?

    init(socket: consuming FileDescriptor, context: TLSContext) throws(CryptoError) {
        let raw = socket.rawValue
        self.socket = socket
        self.tls = try TLSConnection(serverOn: raw, context: context)
    }

    var descriptor: Int32 { socket.rawValue }

    /// One step of the TLS handshake on the non-blocking socket; nil when it failed.
    func handshake() -> TLSProgress? { try? tls.handshake() }

    var negotiatedProtocol: String? { tls.negotiatedProtocol }

    var clientCertificateSubject: String? { tls.verifiedPeerSubject }

    /// Creates the server session and queues our SETTINGS. Without `answerPings` PINGs go
    /// unacknowledged, like a dead path (to test the client's keep-alive timeout).
    func start(maximumConcurrentStreams: UInt32, answerPings: Bool) -> Bool {
        session = try? HTTP2Session(
            role: .server, delegate: self, settings: [.maximumConcurrentStreams(maximumConcurrentStreams)],
            acknowledgePings: answerPings)
        return session != nil
    }

    /// True when the session has nothing left to read or write (after GOAWAY both ways).
    var isFinished: Bool { session?.isFinished ?? true }

    var hasPendingOutput: Bool { session?.hasPendingOutput ?? false }

    func respond(streamID: Int32, status: Int, headers: [HTTPField], body: [UInt8]) {
        guard streams[streamID] != nil else { return }
        session?.submitResponse(
            streamID: streamID, fields: [HTTPField(":status", String(status))] + headers, body: body)
    }

    func refuse(streamID: Int32) { session?.resetStream(streamID, errorCode: .refusedStream) }

    func goAway(lastStreamID: Int32) { session?.goAway(lastStreamID: lastStreamID) }

    /// Reads what the socket has and feeds the session; false when the peer is gone.
    func readAvailable() -> Bool {
        guard let session else { return false }
        return tls.readAvailable(into: &readBuffer) { session.receive($0) }
    }

    /// Writes the session's output until the socket would block; false when the peer is gone.
    func flush() -> Bool {
        guard let session else { return false }
        switch session.flush(to: tls) {
        case .drained:
            wantsWrite = false
            return true
        case .wouldBlockOnWrite:
            wantsWrite = true
            return true
        case .wouldBlockOnRead: return true
        case .closed, .failed: return false
        }
    }

    // MARK: HTTP2SessionDelegate

    func session(_ session: HTTP2Session, openedStream streamID: Int32) {
        streams[streamID] = Stream()
        onStreamOpened?(streams.count)
    }

    func session(_ session: HTTP2Session, receivedHeader header: HTTPField, streamID: Int32) {
        streams[streamID]?.fields.append(header)
    }

    func session(_ session: HTTP2Session, receivedData bytes: UnsafeRawBufferPointer, streamID: Int32) {
        guard let stream = streams[streamID] else { return }
        let room = Self.maximumRecordedBody - stream.body.count
        stream.body.append(contentsOf: bytes.prefix(max(0, room)))
    }

    func session(_ session: HTTP2Session, peerEndedStream streamID: Int32) {
        guard let stream = streams[streamID] else { return }
        completedRequests.append(Request(streamID: streamID, fields: stream.fields, body: stream.body))
    }

    func session(_ session: HTTP2Session, closedStream streamID: Int32, errorCode: HTTP2ErrorCode) {
        streams.removeValue(forKey: streamID)
    }

    func session(_ session: HTTP2Session, didNotSendStream streamID: Int32) {}

    func sessionReceivedSettings(_ session: HTTP2Session) {}

    func session(_ session: HTTP2Session, receivedGoAway lastStreamID: Int32) {}

    func session(_ session: HTTP2Session, receivedPing isAcknowledgement: Bool) {
        if !isAcknowledgement { onPing?() }
    }
}

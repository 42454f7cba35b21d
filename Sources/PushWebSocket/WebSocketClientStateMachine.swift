import PushSystem

/// How a connection ended, for the owner's reconnect decision and its one log line.
public enum WebSocketClosure: Sendable, Equatable {
    /// The server's handshake response was refused.
    case handshakeFailed(WebSocketError)
    /// This client closed (``WebSocketClientStateMachine/close(_:)``) and the server answered.
    case closedByClient
    /// The server sent a Close frame first (its code, nil when it sent none); this client echoed it.
    case closedByServer(WebSocketCloseCode?)
    /// The server broke the protocol: this client sent a Close frame with this code and gives up.
    case failed(WebSocketCloseCode)
    /// More output waited to be written than ``WebSocketClientStateMachine/maximumUnsentOutputByteCount``
    /// allows: the server does not read. No Close frame: it would wait behind the rest.
    case outputBacklog
    /// The byte stream ended without a closing handshake (§7.1.5's 1006).
    case connectionLost
}

/// What the owner of a client connection must do next, besides writing
/// ``WebSocketClientStateMachine/unsentOutput``. A state machine that returned `.closeConnection`
/// answers every later event with nothing.
public enum WebSocketAction: Sendable, Equatable {
    /// The handshake completed: messages may be sent.
    case opened
    /// A complete text message (fragments reassembled, UTF-8 checked).
    case message(String)
    /// A Pong frame arrived (the answer to an idle check's ping).
    case pong([UInt8])
    /// Close the stream now (after writing what it can of the unsent output); the connection is over.
    case closeConnection(WebSocketClosure)
}

/// An RFC 6455 client connection as a pure state machine: it takes the bytes read from the stream
/// and the owner's requests, and returns what happened; the bytes to write wait in
/// ``unsentOutput`` until the owner reports them written with ``wrote(_:)``. No socket, no clock:
/// the owner (an event loop) reads, writes and times out; `Random` supplies the handshake nonce and
/// the masking keys (§5.3 wants them unpredictable: the system generator in production).
///
/// Client frames are masked and never fragmented. Server messages are reassembled in one buffer
/// that grows geometrically (linear time in the message's size), at most `maximumMessageByteCount`
/// bytes and `maximumFrameCountPerMessage` frames, zero-length fragments counted like any other
/// (docs/protocol.md §13); past either limit the connection closes with 1009. Binary messages are
/// refused at their first frame with 1003 (relays speak text), invalid UTF-8 with 1007, any other
/// violation (a masked frame among them) with 1002. One call returns at most one message. A ping is
/// answered with a pong carrying its
/// payload, but at most one answer waits behind unsent output: a newer ping replaces it. More than
/// `maximumUnsentOutputByteCount` bytes waiting to be written end the connection.
/// (docs/decisions/0390-marmot-push-building-blocks.md, docs/decisions/0710-relay-connection-limits.md)
public struct WebSocketClientStateMachine<Random: RandomNumberGenerator> {
    private enum State {
        /// The request was written; the response head is being read.
        case handshaking
        case open
        /// This client sent a Close frame and waits for the server's.
        case closing
        case closed
    }

    public let url: WebSocketURL
    public let maximumMessageByteCount: Int
    public let maximumFrameCountPerMessage: Int
    public let maximumUnsentOutputByteCount: Int
    private var random: Random
    private let handshake: WebSocketHandshake
    private var state = State.handshaking
    private var responseHead: [UInt8] = []
    private var parser: WebSocketFrameParser
    /// The text message being reassembled, appended in place (this struct holds the only reference,
    /// so an append never copies what came before); nil when no fragmented message is open.
    private var message: [UInt8]?
    private var messageFrameCount = 0
    /// Frames to write, from `outputWrittenCount` on.
    private var output: [UInt8] = []
    private var outputWrittenCount = 0
    /// The payload of the newest ping not answered yet: its pong is queued once the output before
    /// it is written, or before the next frame this client sends.
    private var pendingPongPayload: [UInt8]?

    public init(
        url: WebSocketURL, maximumMessageByteCount: Int = 262_144, maximumFrameCountPerMessage: Int = 64,
        maximumUnsentOutputByteCount: Int = 1_048_576, random: Random
    ) {
        self.url = url
        self.maximumMessageByteCount = maximumMessageByteCount
        self.maximumFrameCountPerMessage = maximumFrameCountPerMessage
        self.maximumUnsentOutputByteCount = maximumUnsentOutputByteCount
        self.random = random
        var nonce = [UInt8](repeating: 0, count: 16)
        for index in nonce.indices { nonce[index] = UInt8.random(in: .min ... .max, using: &self.random) }
        handshake = WebSocketHandshake(nonce: nonce)
        parser = WebSocketFrameParser(maximumPayloadByteCount: maximumMessageByteCount)
    }

    /// The `Sec-WebSocket-Key` this connection sent.
    public var handshakeKey: String { handshake.key }

    public var isOpen: Bool { state == .open }

    /// The bytes to write next, in order. Report what was written with ``wrote(_:)``.
    public var unsentOutput: ArraySlice<UInt8> { output[outputWrittenCount...] }

    public var unsentOutputByteCount: Int { output.count - outputWrittenCount }

    /// The owner wrote the first `count` bytes of ``unsentOutput``.
    public mutating func wrote(_ count: Int) {
        precondition(count >= 0 && count <= unsentOutputByteCount, "wrote more than was unsent")
        outputWrittenCount += count
        guard outputWrittenCount == output.count else { return }
        // A buffer that once held a backlog is given back rather than kept for the connection's life.
        output.removeAll(keepingCapacity: output.capacity <= 16_384)
        outputWrittenCount = 0
        if let payload = pendingPongPayload, state == .open {
            pendingPongPayload = nil
            append(frame(.pong, payload))
        }
    }

    /// Queues the handshake request, to write once the stream (TCP, then TLS for `wss`) is up.
    public mutating func start() {
        guard state == .handshaking, output.isEmpty else { return }
        append(handshake.request(for: url))
    }

    /// Bytes read from the stream. At most one message is returned: the frames after it wait for
    /// ``readBuffered()``, so that the owner can serve its other connections in between.
    public mutating func received(_ bytes: some Collection<UInt8>) -> [WebSocketAction] {
        switch state {
        case .closed: return []
        case .handshaking: return receivedDuringHandshake(Array(bytes))
        case .open, .closing:
            parser.append(bytes)
            return readFrames()
        }
    }

    /// Reads on in the bytes already received, up to the next message; nothing when no whole frame
    /// waits. Call it until it returns no message before giving the machine more bytes.
    public mutating func readBuffered() -> [WebSocketAction] {
        guard state == .open || state == .closing else { return [] }
        return readFrames()
    }

    /// The stream ended (EOF or a read error).
    public mutating func streamEnded() -> [WebSocketAction] {
        guard state != .closed else { return [] }
        let closure: WebSocketClosure = state == .closing ? .closedByClient : .connectionLost
        end()
        return [.closeConnection(closure)]
    }

    /// A text message to send; nothing happens unless the connection is open.
    public mutating func send(text: String) -> [WebSocketAction] {
        guard state == .open else { return [] }
        return enqueue(frame(.text, Array(text.utf8)))
    }

    /// A ping (the owner's idle check); `payload` is cut to 125 bytes.
    public mutating func ping(_ payload: [UInt8] = []) -> [WebSocketAction] {
        guard state == .open else { return [] }
        return enqueue(frame(.ping, Array(payload.prefix(WebSocketFrame.maximumControlPayloadByteCount))))
    }

    /// Starts the closing handshake; the connection ends when the server answers or the stream ends
    /// (the owner bounds that wait). Before the handshake completes it just ends the connection.
    public mutating func close(_ code: WebSocketCloseCode = .normal) -> [WebSocketAction] {
        switch state {
        case .handshaking:
            end()
            return [.closeConnection(.closedByClient)]
        case .open:
            state = .closing
            // After its own Close a client no longer processes data (§5.5.1 lets it discard them).
            message = nil
            parser.maximumDataPayloadByteCount = maximumMessageByteCount
            return enqueue(frame(.close, closePayload(code)))
        case .closing, .closed:
            return []
        }
    }

    private mutating func receivedDuringHandshake(_ bytes: [UInt8]) -> [WebSocketAction] {
        responseHead.append(contentsOf: bytes)
        guard let end = HTTPHead.end(in: responseHead) else {
            guard responseHead.count <= WebSocketHandshake.maximumResponseHeadByteCount else {
                self.end()
                return [.closeConnection(.handshakeFailed(WebSocketError(.responseTooLarge)))]
            }
            return []
        }
        guard end <= WebSocketHandshake.maximumResponseHeadByteCount else {
            self.end()
            return [.closeConnection(.handshakeFailed(WebSocketError(.responseTooLarge)))]
        }
        do throws(WebSocketError) {
            try handshake.validate(responseHead: responseHead[..<end])
        } catch {
            self.end()
            return [.closeConnection(.handshakeFailed(error))]
        }
        state = .open
        parser.append(responseHead[(end + 4)...])
        responseHead = []
        return [.opened] + readFrames()
    }

    private mutating func readFrames() -> [WebSocketAction] {
        var actions: [WebSocketAction] = []
        while state == .open || state == .closing {
            let frame: WebSocketFrame
            do throws(WebSocketError) {
                guard let next = try parser.nextFrame() else { break }
                frame = next
            } catch {
                return actions + fail(error.closeCode)
            }
            let handled = handle(frame)
            actions += handled
            // One message per call: the work one connection costs its loop's others at a time.
            if case .message = handled.last { break }
        }
        return actions
    }

    private mutating func handle(_ frame: WebSocketFrame) -> [WebSocketAction] {
        switch frame.opcode {
        case .ping:
            guard state == .open else { return [] }
            // §5.5.3 allows answering only the most recent ping: one answer waits, whatever the
            // server sends while this client's output is backed up (docs/protocol.md §13).
            guard unsentOutputByteCount == 0 else {
                pendingPongPayload = frame.payload
                return []
            }
            return enqueue(self.frame(.pong, frame.payload))
        case .pong:
            return [.pong(frame.payload)]
        case .close:
            return receivedClose(frame.payload)
        case .text, .binary:
            guard state == .open else { return [] }
            guard message == nil else { return fail(.protocolError) }
            guard frame.opcode == .text else { return fail(.unsupportedData) }
            guard !frame.fin else { return complete(frame.payload) }
            message = frame.payload
            messageFrameCount = 1
            parser.maximumDataPayloadByteCount = maximumMessageByteCount - frame.payload.count
            return []
        case .continuation:
            guard state == .open else { return [] }
            guard message != nil else { return fail(.protocolError) }
            messageFrameCount += 1
            // The parser refused a payload over what is left from the frame header already.
            guard messageFrameCount <= maximumFrameCountPerMessage else { return fail(.messageTooBig) }
            message!.append(contentsOf: frame.payload)
            parser.maximumDataPayloadByteCount = maximumMessageByteCount - message!.count
            guard frame.fin else { return [] }
            let payload = message!
            message = nil
            parser.maximumDataPayloadByteCount = maximumMessageByteCount
            return complete(payload)
        }
    }

    private mutating func complete(_ payload: [UInt8]) -> [WebSocketAction] {
        guard let text = String(validating: payload, as: UTF8.self) else { return fail(.invalidPayload) }
        return [.message(text)]
    }

    /// §5.5.1: a Close payload is empty or a valid code plus UTF-8 reason. A client that has not
    /// sent Close echoes the code; then the connection is over either way (§7.1.2 lets the client
    /// close the stream once both Close frames have passed).
    private mutating func receivedClose(_ payload: [UInt8]) -> [WebSocketAction] {
        var code: WebSocketCloseCode?
        if !payload.isEmpty {
            guard payload.count >= 2 else { return fail(.protocolError) }
            let received = WebSocketCloseCode(rawValue: UInt16(payload[0]) << 8 | UInt16(payload[1]))
            guard received.isValidOnTheWire else { return fail(.protocolError) }
            guard String(validating: payload[2...], as: UTF8.self) != nil else { return fail(.invalidPayload) }
            code = received
        }
        if state == .closing {
            end()
            return [.closeConnection(.closedByClient)]
        }
        end()
        let echo = code.map { closePayload($0) } ?? []
        appendIfRoom(frame(.close, echo))
        return [.closeConnection(.closedByServer(code))]
    }

    /// §7.1.7 "Fail the WebSocket Connection": a Close frame with the reason's code, then the end.
    private mutating func fail(_ code: WebSocketCloseCode) -> [WebSocketAction] {
        let alreadySentClose = state == .closing
        end()
        if !alreadySentClose { appendIfRoom(frame(.close, closePayload(code))) }
        return [.closeConnection(.failed(code))]
    }

    /// Closed: nothing is reassembled or answered any more.
    private mutating func end() {
        state = .closed
        message = nil
        pendingPongPayload = nil
    }

    /// Queues a frame this client sends, after the pong still owed (if any); past the output limit
    /// the connection is over instead.
    private mutating func enqueue(_ frameBytes: [UInt8]) -> [WebSocketAction] {
        if let payload = pendingPongPayload {
            pendingPongPayload = nil
            append(frame(.pong, payload))
        }
        guard unsentOutputByteCount + frameBytes.count <= maximumUnsentOutputByteCount else {
            end()
            output = []
            outputWrittenCount = 0
            return [.closeConnection(.outputBacklog)]
        }
        append(frameBytes)
        return []
    }

    /// The last frame of a connection: queued when the limit leaves room, else dropped.
    private mutating func appendIfRoom(_ frameBytes: [UInt8]) {
        guard unsentOutputByteCount + frameBytes.count <= maximumUnsentOutputByteCount else { return }
        append(frameBytes)
    }

    private mutating func append(_ bytes: [UInt8]) {
        // Written bytes are dropped once they are at least half the buffer: linear in what passes.
        if outputWrittenCount > 0, outputWrittenCount * 2 >= output.count {
            output.removeFirst(outputWrittenCount)
            outputWrittenCount = 0
        }
        output.append(contentsOf: bytes)
    }

    private func closePayload(_ code: WebSocketCloseCode) -> [UInt8] {
        [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
    }

    private mutating func frame(_ opcode: WebSocketOpcode, _ payload: [UInt8]) -> [UInt8] {
        let bits = random.next()
        let maskingKey = (0..<4).map { UInt8(truncatingIfNeeded: bits >> ($0 * 8)) }
        return WebSocketFrame(opcode: opcode, payload: payload).encoded(maskingKey: maskingKey)
    }
}

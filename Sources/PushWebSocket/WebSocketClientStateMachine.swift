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
    /// The byte stream ended without a closing handshake (§7.1.5's 1006).
    case connectionLost
}

/// What the owner of a client connection must do next. A state machine that returned
/// `.closeConnection` answers every later event with nothing.
public enum WebSocketAction: Sendable, Equatable {
    /// Write these bytes to the stream, in order.
    case write([UInt8])
    /// The handshake completed: messages may be sent.
    case opened
    /// A complete text message (fragments reassembled, UTF-8 checked).
    case message(String)
    /// A Pong frame arrived (the answer to an idle check's ping).
    case pong([UInt8])
    /// Close the stream now; the connection is over.
    case closeConnection(WebSocketClosure)
}

/// An RFC 6455 client connection as a pure state machine: it takes the bytes read from the stream
/// and the owner's requests, and returns the bytes to write and what happened. No socket, no clock:
/// the owner (an event loop) reads, writes and times out; `Random` supplies the handshake nonce and
/// the masking keys (§5.3 wants them unpredictable: the system generator in production).
///
/// Client frames are masked and never fragmented; server frames are reassembled up to
/// `maximumMessageByteCount` (a larger message is closed with 1009), binary messages are refused
/// with 1003 (relays speak text), invalid UTF-8 with 1007, any other violation with 1002; pings are
/// answered with a pong carrying the same payload. (docs/decisions/0390-marmot-push-building-blocks.md)
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
    private var random: Random
    private let handshake: WebSocketHandshake
    private var state = State.handshaking
    private var responseHead: [UInt8] = []
    private var parser: WebSocketFrameParser
    /// The opcode and bytes of a fragmented message still being received.
    private var fragments: (opcode: WebSocketOpcode, payload: [UInt8])?

    public init(url: WebSocketURL, maximumMessageByteCount: Int = 262_144, random: Random) {
        self.url = url
        self.maximumMessageByteCount = maximumMessageByteCount
        self.random = random
        var nonce = [UInt8](repeating: 0, count: 16)
        for index in nonce.indices { nonce[index] = UInt8.random(in: .min ... .max, using: &self.random) }
        handshake = WebSocketHandshake(nonce: nonce)
        parser = WebSocketFrameParser(maximumPayloadByteCount: maximumMessageByteCount)
    }

    /// The `Sec-WebSocket-Key` this connection sent.
    public var handshakeKey: String { handshake.key }

    public var isOpen: Bool { state == .open }

    /// The handshake request, to write once the stream (TCP, then TLS for `wss`) is up.
    public func start() -> [WebSocketAction] {
        [.write(handshake.request(for: url))]
    }

    /// Bytes read from the stream.
    public mutating func received(_ bytes: some Collection<UInt8>) -> [WebSocketAction] {
        switch state {
        case .closed: return []
        case .handshaking: return receivedDuringHandshake(Array(bytes))
        case .open, .closing:
            parser.append(bytes)
            return readFrames()
        }
    }

    /// The stream ended (EOF or a read error).
    public mutating func streamEnded() -> [WebSocketAction] {
        guard state != .closed else { return [] }
        let closure: WebSocketClosure = state == .closing ? .closedByClient : .connectionLost
        state = .closed
        return [.closeConnection(closure)]
    }

    /// A text message to send; nothing happens unless the connection is open.
    public mutating func send(text: String) -> [WebSocketAction] {
        guard state == .open else { return [] }
        return [.write(frame(.text, Array(text.utf8)))]
    }

    /// A ping (the owner's idle check); `payload` is cut to 125 bytes.
    public mutating func ping(_ payload: [UInt8] = []) -> [WebSocketAction] {
        guard state == .open else { return [] }
        return [.write(frame(.ping, Array(payload.prefix(WebSocketFrame.maximumControlPayloadByteCount))))]
    }

    /// Starts the closing handshake; the connection ends when the server answers or the stream ends
    /// (the owner bounds that wait). Before the handshake completes it just ends the connection.
    public mutating func close(_ code: WebSocketCloseCode = .normal) -> [WebSocketAction] {
        switch state {
        case .handshaking:
            state = .closed
            return [.closeConnection(.closedByClient)]
        case .open:
            state = .closing
            return [.write(frame(.close, closePayload(code)))]
        case .closing, .closed:
            return []
        }
    }

    private mutating func receivedDuringHandshake(_ bytes: [UInt8]) -> [WebSocketAction] {
        responseHead.append(contentsOf: bytes)
        guard let end = Self.endOfHead(responseHead) else {
            guard responseHead.count <= WebSocketHandshake.maximumResponseHeadByteCount else {
                state = .closed
                return [.closeConnection(.handshakeFailed(WebSocketError(.responseTooLarge)))]
            }
            return []
        }
        guard end <= WebSocketHandshake.maximumResponseHeadByteCount else {
            state = .closed
            return [.closeConnection(.handshakeFailed(WebSocketError(.responseTooLarge)))]
        }
        do throws(WebSocketError) {
            try handshake.validate(responseHead: responseHead[..<end])
        } catch {
            state = .closed
            return [.closeConnection(.handshakeFailed(error))]
        }
        state = .open
        parser.append(responseHead[(end + 4)...])
        responseHead = []
        return [.opened] + readFrames()
    }

    /// The index of the `\r\n\r\n` that ends the head.
    private static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
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
            actions += handle(frame)
        }
        return actions
    }

    private mutating func handle(_ frame: WebSocketFrame) -> [WebSocketAction] {
        switch frame.opcode {
        case .ping:
            guard state == .open else { return [] }
            return [.write(self.frame(.pong, frame.payload))]
        case .pong:
            return [.pong(frame.payload)]
        case .close:
            return receivedClose(frame.payload)
        case .text, .binary:
            guard fragments == nil else { return fail(.protocolError) }
            guard frame.fin else {
                fragments = (frame.opcode, frame.payload)
                return []
            }
            return complete(frame.opcode, frame.payload)
        case .continuation:
            guard var pending = fragments else { return fail(.protocolError) }
            guard pending.payload.count + frame.payload.count <= maximumMessageByteCount else {
                return fail(.messageTooBig)
            }
            pending.payload += frame.payload
            guard frame.fin else {
                fragments = pending
                return []
            }
            fragments = nil
            return complete(pending.opcode, pending.payload)
        }
    }

    private mutating func complete(_ opcode: WebSocketOpcode, _ payload: [UInt8]) -> [WebSocketAction] {
        // After its own Close, a client no longer processes data (§5.5.1 lets it discard them).
        guard state == .open else { return [] }
        guard opcode == .text else { return fail(.unsupportedData) }
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
            state = .closed
            return [.closeConnection(.closedByClient)]
        }
        state = .closed
        let echo = code.map(closePayload) ?? []
        return [.write(frame(.close, echo)), .closeConnection(.closedByServer(code))]
    }

    /// §7.1.7 "Fail the WebSocket Connection": a Close frame with the reason's code, then the end.
    private mutating func fail(_ code: WebSocketCloseCode) -> [WebSocketAction] {
        let alreadySentClose = state == .closing
        state = .closed
        fragments = nil
        let closeFrame: [WebSocketAction] = alreadySentClose ? [] : [.write(frame(.close, closePayload(code)))]
        return closeFrame + [.closeConnection(.failed(code))]
    }

    private func closePayload(_ code: WebSocketCloseCode) -> [UInt8] {
        [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
    }

    private mutating func frame(_ opcode: WebSocketOpcode, _ payload: [UInt8]) -> [UInt8] {
        let maskingKey = (0..<4).map { _ in UInt8.random(in: .min ... .max, using: &random) }
        return WebSocketFrame(opcode: opcode, payload: payload).encoded(maskingKey: maskingKey)
    }
}

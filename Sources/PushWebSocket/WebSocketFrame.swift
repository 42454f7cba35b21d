/// Frame opcodes (RFC 6455 §5.2); the others are reserved and a protocol error.
public enum WebSocketOpcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    public var isControl: Bool { rawValue & 0x8 != 0 }
}

/// One frame as read from the peer (unmasked) or to be written.
public struct WebSocketFrame: Sendable, Equatable {
    public var fin: Bool
    public var opcode: WebSocketOpcode
    public var payload: [UInt8]

    public init(fin: Bool = true, opcode: WebSocketOpcode, payload: [UInt8]) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }

    /// Control frames carry at most 125 bytes (§5.5).
    public static let maximumControlPayloadByteCount = 125

    /// The frame as a client writes it: masked with `maskingKey` (§5.3), length in the shortest form.
    public func encoded(maskingKey: [UInt8]) -> [UInt8] {
        precondition(maskingKey.count == 4, "a masking key is 4 bytes")
        var output: [UInt8] = []
        output.reserveCapacity(payload.count + 14)
        output.append((fin ? 0x80 : 0) | opcode.rawValue)
        let count = payload.count
        if count < 126 {
            output.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            output.append(0x80 | 126)
            output.append(contentsOf: [UInt8(count >> 8), UInt8(count & 0xFF)])
        } else {
            output.append(0x80 | 127)
            output.append(contentsOf: withUnsafeBytes(of: UInt64(count).bigEndian, Array.init))
        }
        output.append(contentsOf: maskingKey)
        for (index, byte) in payload.enumerated() { output.append(byte ^ maskingKey[index & 3]) }
        return output
    }
}

/// Reads server frames from a byte stream (RFC 6455 §5.2) and refuses what a client must not
/// accept: reserved bits (no extension was negotiated), reserved opcodes, masked frames (§5.1),
/// fragmented or over-long control frames (§5.5), lengths not in their shortest form or with the
/// top bit set, and data payloads over the limit (refused from the header, before any payload is
/// buffered).
public struct WebSocketFrameParser: Sendable {
    /// The largest payload of a text, binary or continuation frame. The client lowers it to what a
    /// fragmented message has left, so that a fragment over the message limit is refused from its
    /// header too.
    public var maximumDataPayloadByteCount: Int
    private var buffer: [UInt8] = []
    private var readIndex = 0

    public init(maximumPayloadByteCount: Int) {
        self.maximumDataPayloadByteCount = maximumPayloadByteCount
    }

    /// Bytes received and not yet parsed into frames.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        if readIndex > 0, readIndex * 2 >= buffer.count {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, nil when more bytes are needed; throws the close code a violation
    /// calls for. After a throw the parser must not be used again.
    public mutating func nextFrame() throws(WebSocketError) -> WebSocketFrame? {
        let available = buffer.count - readIndex
        guard available >= 2 else { return nil }
        let first = buffer[readIndex]
        let second = buffer[readIndex + 1]
        guard first & 0x70 == 0, let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw WebSocketError(.protocolError)
        }
        let fin = first & 0x80 != 0
        guard second & 0x80 == 0 else { throw WebSocketError(.protocolError) }
        var headerCount = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(buffer[readIndex + 2]) << 8 | UInt64(buffer[readIndex + 3])
            guard length >= 126 else { throw WebSocketError(.protocolError) }
            headerCount = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = buffer[(readIndex + 2)..<(readIndex + 10)].reduce(0) { $0 << 8 | UInt64($1) }
            guard length >> 63 == 0, length > 0xFFFF else { throw WebSocketError(.protocolError) }
            headerCount = 10
        }
        if opcode.isControl {
            guard fin, length <= UInt64(WebSocketFrame.maximumControlPayloadByteCount) else {
                throw WebSocketError(.protocolError)
            }
        } else {
            guard length <= UInt64(maximumDataPayloadByteCount) else { throw WebSocketError(.messageTooBig) }
        }
        let total = headerCount + Int(length)
        guard available >= total else { return nil }
        let payload = Array(buffer[(readIndex + headerCount)..<(readIndex + total)])
        readIndex += total
        return WebSocketFrame(fin: fin, opcode: opcode, payload: payload)
    }
}

import PushCrypto

@testable import PushWebSocket

/// What a server sends and how it reads a client's frames, written from RFC 6455 for the tests.
enum WebSocketServerSide {
    /// The 101 response for a client's `Sec-WebSocket-Key`.
    static func response(key: String, extraHeaders: String = "", accept: String? = nil) -> [UInt8] {
        let acceptValue = accept ?? Base64.encode(SHA1.hash(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
        return Array(
            ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(acceptValue)\r\n\(extraHeaders)\r\n").utf8)
    }

    /// An unmasked server frame; `length` forces a longer length encoding than needed.
    static func frame(
        _ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, masked: Bool = false,
        lengthForm: Int? = nil
    ) -> [UInt8] {
        var output: [UInt8] = [(fin ? 0x80 : 0) | rsv << 4 | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        let form = lengthForm ?? (payload.count < 126 ? 0 : payload.count <= 0xFFFF ? 2 : 8)
        switch form {
        case 0: output.append(maskBit | UInt8(payload.count))
        case 2: output += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: output += [maskBit | 127] + withUnsafeBytes(of: UInt64(payload.count).bigEndian, Array.init)
        }
        if masked { output += [0, 0, 0, 0] }
        return output + payload
    }

    static func text(_ text: String, fin: Bool = true) -> [UInt8] { frame(0x1, Array(text.utf8), fin: fin) }

    static func close(_ code: UInt16?, reason: [UInt8] = []) -> [UInt8] {
        frame(0x8, code.map { [UInt8($0 >> 8), UInt8($0 & 0xFF)] + reason } ?? [])
    }

    /// Reads the client frames in `bytes`: each must be masked; returns their FIN, opcode and
    /// unmasked payload, or nil when a frame is unmasked or truncated.
    static func readClientFrames(_ bytes: [UInt8]) -> [(fin: Bool, opcode: UInt8, payload: [UInt8])]? {
        var frames: [(fin: Bool, opcode: UInt8, payload: [UInt8])] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= 6, bytes[offset + 1] & 0x80 != 0 else { return nil }
            var length = Int(bytes[offset + 1] & 0x7F)
            var header = 2
            if length == 126 {
                length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
                header = 4
            } else if length == 127 {
                length = bytes[(offset + 2)..<(offset + 10)].reduce(0) { $0 << 8 | Int($1) }
                header = 10
            }
            let maskStart = offset + header
            guard bytes.count >= maskStart + 4 + length else { return nil }
            let mask = Array(bytes[maskStart..<(maskStart + 4)])
            let payload = bytes[(maskStart + 4)..<(maskStart + 4 + length)].enumerated().map {
                $0.element ^ mask[$0.offset & 3]
            }
            frames.append((bytes[offset] & 0x80 != 0, bytes[offset] & 0x0F, payload))
            offset = maskStart + 4 + length
        }
        return frames
    }
}

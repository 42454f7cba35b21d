import Foundation
import PushCrypto
import Testing

@testable import PushWebSocket

typealias Machine = WebSocketClientStateMachine<SeededRandom>

/// A client machine after a successful handshake, and helpers to read what it wrote.
struct OpenClient {
    var machine: Machine

    init(limit: Int = 262_144, seed: UInt64 = 1) {
        machine = Machine(
            url: WebSocketURL("wss://relay.example.com/inbox")!, maximumMessageByteCount: limit,
            random: SeededRandom(seed: seed))
        _ = machine.start()
        let actions = machine.received(WebSocketServerSide.response(key: machine.handshakeKey))
        precondition(actions == [.opened])
    }

    /// The frames written by `actions`, read as a server reads them.
    static func written(_ actions: [WebSocketAction]) -> [(fin: Bool, opcode: UInt8, payload: [UInt8])] {
        actions.compactMap {
            guard case .write(let bytes) = $0 else { return nil }
            return WebSocketServerSide.readClientFrame(bytes)
        }
    }

    /// True when `actions` fail the connection with `code`: a Close frame carrying it, then the end.
    static func failed(_ actions: [WebSocketAction], with code: WebSocketCloseCode) -> Bool {
        let frames = written(actions)
        return frames.count == 1 && frames[0].opcode == 0x8
            && frames[0].payload == [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
            && actions.last == .closeConnection(.failed(code))
    }
}

@Suite("WebSocket client handshake (RFC 6455 §4)")
struct WebSocketHandshakeTests {
    @Test("Sec-WebSocket-Accept of RFC 6455 §1.3's sample key")
    func acceptSample() {
        #expect(WebSocketHandshake.accept(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test("the request names the target and host and carries a 16-byte random key and version 13")
    func request() throws {
        var machine = Machine(
            url: WebSocketURL("wss://Relay.Example.com:8443/inbox?x=1")!, random: SeededRandom(seed: 7))
        guard case .write(let bytes) = machine.start().first else {
            Issue.record("no request")
            return
        }
        let key = machine.handshakeKey
        #expect(try #require(Base64.decode(key)).count == 16)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "GET /inbox?x=1 HTTP/1.1\r\nHost: relay.example.com:8443\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n")
        let other = Machine(url: WebSocketURL("wss://relay.example.com")!, random: SeededRandom(seed: 8))
        #expect(other.handshakeKey != key)
        _ = machine.received([])
    }

    @Test("a response read byte by byte opens the connection and frames after its head are read")
    func splitResponse() {
        var machine = Machine(url: WebSocketURL("ws://127.0.0.1:7000")!, random: SeededRandom(seed: 2))
        _ = machine.start()
        let bytes = WebSocketServerSide.response(key: machine.handshakeKey) + WebSocketServerSide.text("hi")
        var actions: [WebSocketAction] = []
        for byte in bytes { actions += machine.received([byte]) }
        #expect(actions == [.opened, .message("hi")])
        #expect(machine.isOpen)
    }

    static let refusedCases: [(String, WebSocketError.Code)] = [
        ("HTTP/1.1 200 OK\r\n\r\n", .status),
        (
            "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ACCEPT\r\n\r\n",
            .upgradeHeader
        ),
        (
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: ACCEPT\r\n\r\n",
            .connectionHeader
        ),
        ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", .accept),
        (
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n", .accept
        ),
        (
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: ACCEPT\r\nSec-WebSocket-Accept: ACCEPT\r\n\r\n", .accept
        ),
        (
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n"
                + "Sec-WebSocket-Accept: ACCEPT\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
            .unrequestedExtension
        ),
        (
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: ACCEPT\r\nSec-WebSocket-Protocol: nostr\r\n\r\n", .unrequestedExtension
        ),
        ("HTTP/1.0 101 Switching Protocols\r\n\r\n", .malformedResponse),
        ("HTTP/1.1 101 Switching Protocols\r\nno colon here\r\n\r\n", .malformedResponse),
    ]

    @Test(
        "a response that fails a check ends the connection with that check",
        arguments: refusedCases)
    func refusedResponses(response: String, failure: WebSocketError.Code) {
        var machine = Machine(url: WebSocketURL("wss://relay.example.com")!, random: SeededRandom(seed: 3))
        _ = machine.start()
        let accept = WebSocketHandshake.accept(forKey: machine.handshakeKey)
        let bytes = Array(response.replacingOccurrences(of: "ACCEPT", with: accept).utf8)
        #expect(machine.received(bytes) == [.closeConnection(.handshakeFailed(WebSocketError(failure)))])
        #expect(machine.received(WebSocketServerSide.text("late")) == [])
    }

    @Test("header names and the Upgrade value are case-insensitive; Connection may list other tokens")
    func caseInsensitiveHeaders() {
        var machine = Machine(url: WebSocketURL("wss://relay.example.com")!, random: SeededRandom(seed: 4))
        _ = machine.start()
        let accept = WebSocketHandshake.accept(forKey: machine.handshakeKey)
        let response =
            "HTTP/1.1 101 Switching Protocols\r\nUPGRADE: WebSocket\r\nconnection: keep-alive, upgrade\r\n"
            + "sec-websocket-accept:\(accept)\r\n\r\n"
        #expect(machine.received(Array(response.utf8)) == [.opened])
    }

    @Test("a response head over 8 KiB without its end is refused as too large")
    func oversizedHead() {
        var machine = Machine(url: WebSocketURL("wss://relay.example.com")!, random: SeededRandom(seed: 5))
        _ = machine.start()
        let head = "HTTP/1.1 101 Switching Protocols\r\nX-Filler: " + String(repeating: "a", count: 9000)
        #expect(
            machine.received(Array(head.utf8)) == [
                .closeConnection(.handshakeFailed(WebSocketError(.responseTooLarge)))
            ])
    }
}

@Suite("WebSocket client frames (RFC 6455 §5)")
struct WebSocketFrameTests {
    @Test("a sent text is one masked FIN text frame, with a new masking key per frame")
    func sendText() {
        var client = OpenClient()
        let first = client.machine.send(text: "[\"REQ\",\"x\",{}]")
        let second = client.machine.send(text: "[\"REQ\",\"x\",{}]")
        let frames = OpenClient.written(first)
        #expect(frames.count == 1)
        #expect(frames[0].fin && frames[0].opcode == 0x1)
        #expect(frames[0].payload == Array("[\"REQ\",\"x\",{}]".utf8))
        #expect(first != second)
        let long = String(repeating: "x", count: 70_000)
        #expect(OpenClient.written(client.machine.send(text: long)).first?.payload.count == 70_000)
    }

    @Test("a fragmented text with a ping between fragments: the pong is written and the message reassembled")
    func fragmented() {
        var client = OpenClient()
        let accented = Array("é".utf8)
        var actions = client.machine.received(
            WebSocketServerSide.frame(0x1, Array("ab".utf8) + [accented[0]], fin: false))
        actions += client.machine.received(WebSocketServerSide.frame(0x9, [1, 2, 3]))
        actions += client.machine.received(WebSocketServerSide.frame(0x0, [accented[1]], fin: false))
        actions += client.machine.received(WebSocketServerSide.frame(0x0, Array("cd".utf8)))
        #expect(actions.last == .message("abécd"))
        let frames = OpenClient.written(actions)
        #expect(frames.count == 1 && frames[0].opcode == 0xA && frames[0].payload == [1, 2, 3])
    }

    @Test("a pong is reported; a ping the owner asks for is a masked ping frame")
    func pingPong() {
        var client = OpenClient()
        #expect(client.machine.received(WebSocketServerSide.frame(0xA, [9])) == [.pong([9])])
        let frames = OpenClient.written(client.machine.ping([7]))
        #expect(frames.count == 1 && frames[0].opcode == 0x9 && frames[0].payload == [7])
    }

    @Test("a message of exactly the limit passes; one byte more fails with 1009, from the header alone")
    func sizeLimit() {
        var client = OpenClient(limit: 1000)
        let exact = String(repeating: "a", count: 1000)
        #expect(client.machine.received(WebSocketServerSide.text(exact)) == [.message(exact)])
        let header = Array(WebSocketServerSide.text(String(repeating: "a", count: 1001)).prefix(4))
        #expect(OpenClient.failed(client.machine.received(header), with: .messageTooBig))
    }

    @Test("fragments adding up to more than the limit fail with 1009")
    func fragmentedOverLimit() {
        var client = OpenClient(limit: 1000)
        #expect(client.machine.received(WebSocketServerSide.text(String(repeating: "a", count: 600), fin: false)) == [])
        let actions = client.machine.received(WebSocketServerSide.frame(0x0, [UInt8](repeating: 0x61, count: 401)))
        #expect(OpenClient.failed(actions, with: .messageTooBig))
    }

    @Test(
        "protocol violations fail the connection with their close code",
        arguments: [
            (WebSocketServerSide.frame(0x2, [1, 2]), WebSocketCloseCode.unsupportedData),
            (WebSocketServerSide.frame(0x1, [0xC3, 0x28]), .invalidPayload),
            (WebSocketServerSide.frame(0x1, [0x61], rsv: 0b100), .protocolError),
            (WebSocketServerSide.frame(0x1, [0x61], masked: true), .protocolError),
            (WebSocketServerSide.frame(0x3, []), .protocolError),
            (WebSocketServerSide.frame(0xB, []), .protocolError),
            (WebSocketServerSide.frame(0x9, [], fin: false), .protocolError),
            (WebSocketServerSide.frame(0x9, [UInt8](repeating: 0, count: 126)), .protocolError),
            (WebSocketServerSide.frame(0x1, Array("short".utf8), lengthForm: 2), .protocolError),
            (WebSocketServerSide.frame(0x1, [UInt8](repeating: 0x61, count: 200), lengthForm: 8), .protocolError),
            ([0x81, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0], .protocolError),
            (WebSocketServerSide.frame(0x0, Array("orphan".utf8)), .protocolError),
            (WebSocketServerSide.text("a", fin: false) + WebSocketServerSide.text("b"), .protocolError),
            (WebSocketServerSide.frame(0x8, [0x03]), .protocolError),
            (WebSocketServerSide.close(1005), .protocolError),
            (WebSocketServerSide.close(999), .protocolError),
            (WebSocketServerSide.close(1000, reason: [0xFF]), .invalidPayload),
        ])
    func violations(bytes: [UInt8], code: WebSocketCloseCode) {
        var client = OpenClient()
        let actions = client.machine.received(bytes)
        #expect(OpenClient.failed(actions, with: code))
        #expect(client.machine.received(WebSocketServerSide.text("late")) == [])
        #expect(client.machine.streamEnded() == [])
    }
}

@Suite("WebSocket client closing (RFC 6455 §7)")
struct WebSocketClosingTests {
    @Test("a server Close is echoed with its code and ends the connection; an empty one is echoed empty")
    func serverCloses() {
        var client = OpenClient()
        let actions = client.machine.received(WebSocketServerSide.close(1001, reason: Array("bye".utf8)))
        #expect(OpenClient.written(actions).map(\.payload) == [[0x03, 0xE9]])
        #expect(actions.last == .closeConnection(.closedByServer(.goingAway)))
        var other = OpenClient(seed: 9)
        let empty = other.machine.received(WebSocketServerSide.close(nil))
        #expect(OpenClient.written(empty).map(\.payload) == [[]])
        #expect(empty.last == .closeConnection(.closedByServer(nil)))
    }

    @Test("a client close sends 1000, ignores data until the server's Close, then ends")
    func clientCloses() {
        var client = OpenClient()
        #expect(OpenClient.written(client.machine.close()).map(\.payload) == [[0x03, 0xE8]])
        #expect(client.machine.send(text: "after") == [])
        #expect(client.machine.received(WebSocketServerSide.text("in flight")) == [])
        #expect(client.machine.received(WebSocketServerSide.close(1000)) == [.closeConnection(.closedByClient)])
    }

    @Test("the stream ending while open is a lost connection; while closing it completes the close")
    func streamEnds() {
        var open = OpenClient()
        #expect(open.machine.streamEnded() == [.closeConnection(.connectionLost)])
        var closing = OpenClient()
        _ = closing.machine.close(.goingAway)
        #expect(closing.machine.streamEnded() == [.closeConnection(.closedByClient)])
    }

    @Test("nothing is sent before the handshake completes; closing then just ends the connection")
    func beforeOpen() {
        var machine = Machine(url: WebSocketURL("wss://relay.example.com")!, random: SeededRandom(seed: 6))
        _ = machine.start()
        #expect(machine.send(text: "x") == [])
        #expect(machine.ping() == [])
        #expect(machine.close() == [.closeConnection(.closedByClient)])
    }
}

@Suite("WebSocket URLs")
struct WebSocketURLTests {
    @Test("wss and ws URLs give host, port, target and Host header")
    func parses() throws {
        let url = try #require(WebSocketURL("wss://relay.example.com"))
        #expect(url.secure && url.host == "relay.example.com" && url.port == 443 && url.target == "/")
        #expect(url.hostHeader == "relay.example.com")
        let local = try #require(WebSocketURL("ws://[::1]:7777/path?q"))
        #expect(!local.secure && local.host == "::1" && local.port == 7777 && local.target == "/path?q")
        #expect(local.hostHeader == "[::1]:7777")
        #expect(WebSocketURL("wss://relay.example.com?x")?.target == "/?x")
    }

    @Test("other schemes, user info, fragments, empty hosts, bad ports and spaces are refused")
    func refuses() {
        for text in [
            "https://relay.example.com", "wss://user@relay.example.com", "wss://relay.example.com/#x", "wss://",
            "wss://:443", "wss://relay.example.com:0", "wss://relay.example.com:65536", "wss://relay.example.com:8a",
            "wss://relay example.com", "wss://[::1", "wss://[::1]x",
        ] {
            #expect(WebSocketURL(text) == nil, "\(text)")
        }
    }
}

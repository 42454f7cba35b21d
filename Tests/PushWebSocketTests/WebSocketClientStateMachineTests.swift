import Foundation
import Glibc
import PushCrypto
import Testing

@testable import PushWebSocket

typealias Machine = WebSocketClientStateMachine<SeededRandom>

/// A client machine after a successful handshake, and helpers to read what it queued.
struct OpenClient {
    var machine: Machine

    init(limit: Int = 262_144, frames: Int = 64, output: Int = 1_048_576, seed: UInt64 = 1) {
        machine = Machine(
            url: WebSocketURL("wss://relay.example.com/inbox")!, maximumMessageByteCount: limit,
            maximumFrameCountPerMessage: frames, maximumUnsentOutputByteCount: output, random: SeededRandom(seed: seed))
        machine.start()
        machine.wrote(machine.unsentOutputByteCount)
        let actions = machine.received(WebSocketServerSide.response(key: machine.handshakeKey))
        precondition(actions == [.opened])
    }

    /// The bytes queued since the last call, reported written.
    mutating func writtenBytes() -> [UInt8] {
        let bytes = Array(machine.unsentOutput)
        machine.wrote(bytes.count)
        return bytes
    }

    /// The frames queued since the last call, read as a server reads them, reported written.
    mutating func written() -> [(fin: Bool, opcode: UInt8, payload: [UInt8])] {
        let frames = WebSocketServerSide.readClientFrames(writtenBytes())
        #expect(frames != nil, "an unmasked or truncated client frame")
        return frames ?? []
    }

    /// Expects `actions` to fail the connection with `code`: a Close frame carrying it, then the end.
    mutating func expectFailed(
        _ actions: [WebSocketAction], with code: WebSocketCloseCode, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let frames = written()
        #expect(frames.map(\.opcode) == [0x8], sourceLocation: sourceLocation)
        #expect(
            frames.first?.payload == [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)],
            sourceLocation: sourceLocation)
        #expect(actions == [.closeConnection(.failed(code))], sourceLocation: sourceLocation)
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
        machine.start()
        let bytes = Array(machine.unsentOutput)
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
        machine.start()
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
        machine.start()
        let accept = WebSocketHandshake.accept(forKey: machine.handshakeKey)
        let bytes = Array(response.replacingOccurrences(of: "ACCEPT", with: accept).utf8)
        #expect(machine.received(bytes) == [.closeConnection(.handshakeFailed(WebSocketError(failure)))])
        #expect(machine.received(WebSocketServerSide.text("late")) == [])
    }

    @Test("header names and the Upgrade value are case-insensitive; Connection may list other tokens")
    func caseInsensitiveHeaders() {
        var machine = Machine(url: WebSocketURL("wss://relay.example.com")!, random: SeededRandom(seed: 4))
        machine.start()
        let accept = WebSocketHandshake.accept(forKey: machine.handshakeKey)
        let response =
            "HTTP/1.1 101 Switching Protocols\r\nUPGRADE: WebSocket\r\nconnection: keep-alive, upgrade\r\n"
            + "sec-websocket-accept:\(accept)\r\n\r\n"
        #expect(machine.received(Array(response.utf8)) == [.opened])
    }

    @Test("a response head over 8 KiB without its end is refused as too large")
    func oversizedHead() {
        var machine = Machine(url: WebSocketURL("wss://relay.example.com")!, random: SeededRandom(seed: 5))
        machine.start()
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
        #expect(client.machine.send(text: "[\"REQ\",\"x\",{}]") == [])
        let first = client.writtenBytes()
        _ = client.machine.send(text: "[\"REQ\",\"x\",{}]")
        let second = client.writtenBytes()
        let frames = WebSocketServerSide.readClientFrames(first) ?? []
        #expect(frames.count == 1)
        #expect(frames.first?.fin == true && frames.first?.opcode == 0x1)
        #expect(frames.first?.payload == Array("[\"REQ\",\"x\",{}]".utf8))
        #expect(first != second)
        _ = client.machine.send(text: String(repeating: "x", count: 70_000))
        #expect(client.written().first?.payload.count == 70_000)
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
        #expect(actions == [.message("abécd")])
        let frames = client.written()
        #expect(frames.count == 1 && frames[0].opcode == 0xA && frames[0].payload == [1, 2, 3])
    }

    @Test("one call returns at most one message; the frames after it come from readBuffered")
    func oneMessagePerCall() {
        var client = OpenClient()
        let bytes =
            WebSocketServerSide.text("one") + WebSocketServerSide.frame(0x9, [1]) + WebSocketServerSide.text("two")
            + WebSocketServerSide.text("th", fin: false)
        #expect(client.machine.received(bytes) == [.message("one")])
        #expect(client.machine.readBuffered() == [.message("two")])
        #expect(client.written().map(\.opcode) == [0xA])
        #expect(client.machine.readBuffered() == [])
        #expect(client.machine.received(WebSocketServerSide.frame(0x0, Array("ree".utf8))) == [.message("three")])
    }

    @Test("a pong is reported; a ping the owner asks for is a masked ping frame")
    func pingPong() {
        var client = OpenClient()
        #expect(client.machine.received(WebSocketServerSide.frame(0xA, [9])) == [.pong([9])])
        #expect(client.machine.ping([7]) == [])
        let frames = client.written()
        #expect(frames.count == 1 && frames[0].opcode == 0x9 && frames[0].payload == [7])
    }

    @Test("a message of exactly the limit passes; one byte more fails with 1009, from the header alone")
    func sizeLimit() {
        var client = OpenClient(limit: 1000)
        let exact = String(repeating: "a", count: 1000)
        #expect(client.machine.received(WebSocketServerSide.text(exact)) == [.message(exact)])
        let header = Array(WebSocketServerSide.text(String(repeating: "a", count: 1001)).prefix(4))
        let actions = client.machine.received(header)
        client.expectFailed(actions, with: .messageTooBig)
    }

    @Test("fragments adding up to more than the limit fail with 1009")
    func fragmentedOverLimit() {
        var client = OpenClient(limit: 1000)
        #expect(client.machine.received(WebSocketServerSide.text(String(repeating: "a", count: 600), fin: false)) == [])
        // Refused from the continuation's header: 401 bytes where 400 are left.
        let header = Array(WebSocketServerSide.frame(0x0, [UInt8](repeating: 0x61, count: 401)).prefix(4))
        let actions = client.machine.received(header)
        client.expectFailed(actions, with: .messageTooBig)
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
        client.expectFailed(actions, with: code)
        #expect(client.machine.received(WebSocketServerSide.text("late")) == [])
        #expect(client.machine.streamEnded() == [])
    }
}

/// CPU time this thread has used, in seconds (the machine under test runs on the test's thread;
/// wall time would count the other work of a loaded machine).
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

@Suite("WebSocket client limits (docs/protocol.md §13)")
struct WebSocketLimitTests {
    static let emptyContinuation = WebSocketServerSide.frame(0x0, [], fin: false)

    @Test("a message of 64 frames passes, zero-length fragments counted; a 65th frame fails with 1009")
    func frameCountLimit() {
        var client = OpenClient()
        var sixtyFour = WebSocketServerSide.text("a", fin: false)
        for _ in 0..<62 { sixtyFour += Self.emptyContinuation }
        sixtyFour += WebSocketServerSide.frame(0x0, Array("b".utf8))
        #expect(client.machine.received(sixtyFour) == [.message("ab")])
        var sixtyFive = WebSocketServerSide.text("a", fin: false)
        for _ in 0..<63 { sixtyFive += Self.emptyContinuation }
        #expect(client.machine.received(sixtyFive) == [])
        let last = client.machine.received(WebSocketServerSide.frame(0x0, Array("b".utf8)))
        client.expectFailed(last, with: .messageTooBig)
    }

    @Test("endless empty continuations after a 200 KB first fragment fail with 1009 at the 65th frame, at once")
    func endlessEmptyContinuations() {
        var client = OpenClient()
        var bytes = WebSocketServerSide.text(String(repeating: "a", count: 200_000), fin: false)
        for _ in 0..<20_000 { bytes += Self.emptyContinuation }
        let started = threadCPUSeconds()
        let actions = client.machine.received(bytes)
        let seconds = threadCPUSeconds() - started
        client.expectFailed(actions, with: .messageTooBig)
        #expect(seconds < 1, "\(seconds) s of CPU")
        #expect(client.machine.received(Self.emptyContinuation) == [])
    }

    @Test(
        "reassembly is linear: an 8 MiB fragment and 2,000 one-byte continuations (limits raised) take well under 1 s")
    func linearReassembly() {
        // The message outgrows the CPU caches, so copying it at every fragment (the fixed bug: 9.8 s
        // here) cannot hide behind a fast in-cache memcpy.
        var client = OpenClient(limit: 16_777_216, frames: 10_000)
        let count = 2_000
        var bytes = WebSocketServerSide.text(String(repeating: "a", count: 8_388_608), fin: false)
        for index in 0..<count { bytes += WebSocketServerSide.frame(0x0, [0x61], fin: index == count - 1) }
        let started = threadCPUSeconds()
        let actions = client.machine.received(bytes)
        let seconds = threadCPUSeconds() - started
        #expect(actions == [.message(String(repeating: "a", count: 8_388_608 + count))])
        #expect(seconds < 1, "\(seconds) s of CPU")
    }

    @Test("a binary message fails with 1003 at its first fragment, before any more is buffered")
    func binaryAtFirstFragment() {
        var client = OpenClient()
        let actions = client.machine.received(WebSocketServerSide.frame(0x2, [1, 2, 3], fin: false))
        client.expectFailed(actions, with: .unsupportedData)
    }

    @Test("a fragmented text that is not UTF-8 fails with 1007 when complete; a masked fragment with 1002")
    func fragmentedViolations() {
        var client = OpenClient()
        #expect(client.machine.received(WebSocketServerSide.text("ok", fin: false)) == [])
        let invalid = client.machine.received(WebSocketServerSide.frame(0x0, [0xC3]))
        client.expectFailed(invalid, with: .invalidPayload)
        var masked = OpenClient(seed: 2)
        #expect(masked.machine.received(WebSocketServerSide.text("ok", fin: false)) == [])
        let actions = masked.machine.received(WebSocketServerSide.frame(0x0, [0x61], masked: true))
        masked.expectFailed(actions, with: .protocolError)
    }

    @Test("while output waits, a newer ping replaces the queued pong; one pong goes once the output is written")
    func onePendingPong() {
        var client = OpenClient()
        _ = client.machine.send(text: "queued")
        let backlog = client.machine.unsentOutputByteCount
        var pings: [UInt8] = []
        for index in 0..<10_000 { pings += WebSocketServerSide.frame(0x9, [UInt8(index & 0xFF), UInt8(index >> 8)]) }
        #expect(client.machine.received(pings) == [])
        #expect(client.machine.unsentOutputByteCount == backlog)
        let frames = client.written()
        #expect(frames.map(\.opcode) == [0x1])
        // The text was written: the newest ping's answer follows, alone.
        let pongs = client.written()
        #expect(pongs.map(\.opcode) == [0xA] && pongs.first?.payload == [0x0F, 0x27])
        #expect(client.written().isEmpty)
    }

    @Test("a pong owed goes before the next frame this client sends")
    func pongBeforeNextFrame() {
        var client = OpenClient()
        _ = client.machine.send(text: "first")
        _ = client.machine.received(WebSocketServerSide.frame(0x9, [5]))
        _ = client.machine.send(text: "second")
        #expect(client.written().map(\.opcode) == [0x1, 0xA, 0x1])
    }

    @Test("more than 1 MiB of unsent output ends the connection; output written as it goes never does")
    func outputLimit() {
        var client = OpenClient()
        let text = String(repeating: "x", count: 65_536)
        // Each frame is 65,550 bytes: 15 fit in 1 MiB, the 16th does not.
        for _ in 0..<15 { #expect(client.machine.send(text: text) == []) }
        #expect(client.machine.send(text: text) == [.closeConnection(.outputBacklog)])
        #expect(client.machine.unsentOutputByteCount == 0)
        #expect(client.machine.send(text: "late") == [])
        #expect(client.machine.received(WebSocketServerSide.frame(0x9, [])) == [])
        var writing = OpenClient(seed: 2)
        for _ in 0..<100 {
            #expect(writing.machine.send(text: text) == [])
            writing.machine.wrote(writing.machine.unsentOutputByteCount / 2)
            writing.machine.wrote(writing.machine.unsentOutputByteCount)
        }
        #expect(writing.machine.isOpen)
    }
}

@Suite("WebSocket client closing (RFC 6455 §7)")
struct WebSocketClosingTests {
    @Test("a server Close is echoed with its code and ends the connection; an empty one is echoed empty")
    func serverCloses() {
        var client = OpenClient()
        let actions = client.machine.received(WebSocketServerSide.close(1001, reason: Array("bye".utf8)))
        #expect(client.written().map(\.payload) == [[0x03, 0xE9]])
        #expect(actions == [.closeConnection(.closedByServer(.goingAway))])
        var other = OpenClient(seed: 9)
        let empty = other.machine.received(WebSocketServerSide.close(nil))
        #expect(other.written().map(\.payload) == [[]])
        #expect(empty == [.closeConnection(.closedByServer(nil))])
    }

    @Test("a client close sends 1000, ignores data until the server's Close, then ends")
    func clientCloses() {
        var client = OpenClient()
        #expect(client.machine.close() == [])
        #expect(client.written().map(\.payload) == [[0x03, 0xE8]])
        #expect(client.machine.send(text: "after") == [])
        #expect(client.machine.received(WebSocketServerSide.text("in flight")) == [])
        #expect(client.machine.received(WebSocketServerSide.close(1000)) == [.closeConnection(.closedByClient)])
    }

    @Test("after its Close a client drops a fragmented message and later data unread, up to the server's Close")
    func dataAfterClose() {
        var client = OpenClient(limit: 1000)
        #expect(client.machine.received(WebSocketServerSide.text("abc", fin: false)) == [])
        #expect(client.machine.close() == [])
        #expect(client.machine.received(WebSocketServerSide.text(String(repeating: "a", count: 1000))) == [])
        #expect(client.machine.received(WebSocketServerSide.frame(0x0, Array("d".utf8))) == [])
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
        machine.start()
        let request = machine.unsentOutputByteCount
        #expect(machine.send(text: "x") == [])
        #expect(machine.ping() == [])
        #expect(machine.unsentOutputByteCount == request)
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

    @Test("a URL is logged as scheme, host, port and path, never its query")
    func logName() {
        #expect(
            WebSocketURL("wss://Relay.Example.com/inbox?token=secret")?.logName == "wss://relay.example.com:443/inbox")
        #expect(WebSocketURL("ws://127.0.0.1:7000")?.logName == "ws://127.0.0.1:7000/")
        #expect(WebSocketURL("ws://127.0.0.1:7001?key=x")?.logName == "ws://127.0.0.1:7001/")
        #expect(WebSocketURL("ws://[::1]:7777/path?q")?.logName == "ws://[::1]:7777/path")
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

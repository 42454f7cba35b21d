import PushWebSocket

/// The RFC 6455 client machine after a valid handshake, fed the input as server bytes, once whole
/// and once a byte at a time: both give the same events (masking keys aside); after the connection
/// ends nothing more happens; the output after the request is masked client frames; messages fit the
/// limit.
enum WebSocketTarget {
    static let limit = 4096

    static func opened() -> WebSocketClientStateMachine<CountingRandom> {
        var machine = WebSocketClientStateMachine(
            url: WebSocketURL("wss://relay.example.com/")!, maximumMessageByteCount: limit, random: CountingRandom())
        machine.start()
        machine.wrote(machine.unsentOutputByteCount)
        let accept = WebSocketHandshake.accept(forKey: machine.handshakeKey)
        let response =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(accept)\r\n\r\n"
        FuzzCheck.require(machine.received(Array(response.utf8)) == [.opened], "the valid handshake does not open")
        return machine
    }

    static func prepare() { _ = opened() }

    static func run(_ input: [UInt8]) {
        var whole = opened()
        let wholeActions = check(drained(&whole, whole.received(input)) + whole.streamEnded())
        checkFrames(Array(whole.unsentOutput))
        var bytewise = opened()
        var bytewiseActions: [WebSocketAction] = []
        for byte in input {
            bytewiseActions += drained(&bytewise, bytewise.received([byte]))
            checkFrames(Array(bytewise.unsentOutput))
            bytewise.wrote(bytewise.unsentOutputByteCount)
        }
        bytewiseActions = check(bytewiseActions + bytewise.streamEnded())
        FuzzCheck.require(wholeActions == bytewiseActions, "splitting the input changed the events")
    }

    /// `actions` and those of the frames still buffered: a call returns at most one message.
    private static func drained(
        _ machine: inout WebSocketClientStateMachine<CountingRandom>, _ actions: [WebSocketAction]
    ) -> [WebSocketAction] {
        var all = actions
        var latest = actions
        while case .message = latest.last {
            latest = machine.readBuffered()
            all += latest
        }
        return all
    }

    /// Every frame of `output` is a whole masked client frame with a short form length.
    private static func checkFrames(_ output: [UInt8]) {
        var offset = 0
        while offset < output.count {
            FuzzCheck.require(output.count - offset >= 6 && output[offset + 1] & 0x80 != 0, "an unmasked client frame")
            let length = Int(output[offset + 1] & 0x7F)
            FuzzCheck.require(length < 126, "a long client frame the fuzzer cannot cause")
            offset += 6 + length
        }
        FuzzCheck.require(offset == output.count, "a truncated client frame")
    }

    /// Checks one run's actions and returns them.
    private static func check(_ actions: [WebSocketAction]) -> [WebSocketAction] {
        var ended = false
        for action in actions {
            FuzzCheck.require(!ended, "an action after the connection ended")
            switch action {
            case .message(let text):
                FuzzCheck.require(text.utf8.count <= limit, "a message over the limit")
            case .closeConnection:
                ended = true
            case .opened:
                FuzzCheck.require(false, "opened twice")
            case .pong(let payload):
                FuzzCheck.require(payload.count <= 125, "a control frame over 125 bytes")
            }
        }
        FuzzCheck.require(ended, "the stream ended without closing the connection")
        return actions
    }
}

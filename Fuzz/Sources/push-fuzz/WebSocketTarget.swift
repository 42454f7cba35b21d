import PushWebSocket

/// The RFC 6455 client machine after a valid handshake, fed the input as server bytes, once whole
/// and once a byte at a time: both give the same events (masking keys aside); after the connection
/// ends nothing more happens; every write is one masked client frame; messages fit the limit.
enum WebSocketTarget {
    static let limit = 4096

    static func opened() -> WebSocketClientStateMachine<CountingRandom> {
        var machine = WebSocketClientStateMachine(
            url: WebSocketURL("wss://relay.example.com/")!, maximumMessageByteCount: limit, random: CountingRandom())
        _ = machine.start()
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
        let wholeActions = check(whole.received(input) + whole.streamEnded())
        var bytewise = opened()
        var bytewiseActions: [WebSocketAction] = []
        for byte in input { bytewiseActions += bytewise.received([byte]) }
        bytewiseActions = check(bytewiseActions + bytewise.streamEnded())
        FuzzCheck.require(
            wholeActions.filter(isEvent) == bytewiseActions.filter(isEvent), "splitting the input changed the events")
    }

    private static func isEvent(_ action: WebSocketAction) -> Bool {
        if case .write = action { return false }
        return true
    }

    /// Checks one run's actions and returns them.
    private static func check(_ actions: [WebSocketAction]) -> [WebSocketAction] {
        var ended = false
        for action in actions {
            FuzzCheck.require(!ended, "an action after the connection ended")
            switch action {
            case .write(let bytes):
                FuzzCheck.require(bytes.count >= 6 && bytes[1] & 0x80 != 0, "an unmasked or truncated client frame")
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

public import PushErrors

/// PushWebSocket's one error (docs/decisions/0540): why the opening handshake was refused (RFC 6455
/// §4.1, the client's checks of the server's response) or why a frame from the peer was refused.
/// Code names are what logs read; never bytes of the response.
public struct WebSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    public typealias Code = ErrorCode<WebSocketError>

    public let code: Code

    public init(_ code: Code) { self.code = code }

    /// The Close status (§7.4.1) that failing the connection for a frame error sends.
    public var closeCode: WebSocketCloseCode { code == .messageTooBig ? .messageTooBig : .protocolError }

    public var description: String { code.name }
}

extension ErrorCode<WebSocketError> {
    /// Not an HTTP/1.1 status line, a header line without a colon, or not terminated in time.
    public static var malformedResponse: Self { Self("malformed_response") }

    /// The response head is longer than ``WebSocketHandshake/maximumResponseHeadByteCount``.
    public static var responseTooLarge: Self { Self("response_too_large") }

    /// A status other than 101 (a relay behind a proxy answering 200, 403, 503…).
    public static var status: Self { Self("status") }

    /// No `Upgrade: websocket` (case-insensitive).
    public static var upgradeHeader: Self { Self("upgrade_header") }

    /// No `upgrade` token in `Connection`.
    public static var connectionHeader: Self { Self("connection_header") }

    /// `Sec-WebSocket-Accept` missing, repeated or not base64(SHA-1(key ‖ GUID)).
    public static var accept: Self { Self("accept") }

    /// An extension or subprotocol the client did not offer.
    public static var unrequestedExtension: Self { Self("unrequested_extension") }

    /// A frame that breaks §5's framing rules (reserved bits, a non-minimal or oversized length,
    /// a fragmented or long control frame): closed with 1002.
    public static var protocolError: Self { Self("protocol_error") }

    /// A frame longer than the parser's payload limit: closed with 1009.
    public static var messageTooBig: Self { Self("message_too_big") }
}

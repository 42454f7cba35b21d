/// Close status codes (RFC 6455 §7.4.1) this client sends, and the check of those a peer sends.
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let normal = WebSocketCloseCode(rawValue: 1000)
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// A data type this endpoint does not accept (a binary message here: relays speak text).
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// Text that is not UTF-8.
    public static let invalidPayload = WebSocketCloseCode(rawValue: 1007)
    /// A message over the size limit.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)

    /// Whether a peer may send this code in a Close frame (§7.4.1–7.4.2): 1000–1003, 1007–1014
    /// and the registered and private ranges 3000–4999; never 1004–1006 or 1015, which are reserved
    /// or only reported locally.
    public var isValidOnTheWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    public var description: String { String(rawValue) }
}

import PushCrypto

/// The client's opening handshake (RFC 6455 §4.1–4.2.2).
public struct WebSocketHandshake: Sendable, Equatable {
    /// §1.3's GUID appended to the key before hashing.
    static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    /// A response head longer than this is refused (a relay's is a few hundred bytes).
    public static let maximumResponseHeadByteCount = 8192

    /// The base64 of the 16 random bytes sent as `Sec-WebSocket-Key`.
    public let key: String

    /// `nonce` must be 16 fresh random bytes (§4.1: "randomly selected").
    public init(nonce: [UInt8]) {
        precondition(nonce.count == 16, "the handshake nonce is 16 bytes")
        key = Base64.encode(nonce)
    }

    /// The `Sec-WebSocket-Accept` value a server must answer with.
    public var expectedAccept: String { Self.accept(forKey: key) }

    public static func accept(forKey key: String) -> String {
        Base64.encode(SHA1.hash(Array((key + acceptGUID).utf8)))
    }

    /// The GET request that opens the connection.
    public func request(for url: WebSocketURL) -> [UInt8] {
        Array(
            ("GET \(url.target) HTTP/1.1\r\nHost: \(url.hostHeader)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
    }

    /// Checks a complete response head (status line and headers, without the blank line).
    public func validate(responseHead: ArraySlice<UInt8>) throws(WebSocketError) {
        let lines = responseHead.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
            $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0
        }
        guard let statusLine = lines.first.map({ String(decoding: $0, as: UTF8.self) }),
            statusLine.hasPrefix("HTTP/1.1 ")
        else { throw WebSocketError(.malformedResponse) }
        let statusCode = statusLine.dropFirst(9).prefix(while: { $0 != " " })
        guard statusCode.count == 3, statusCode.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw WebSocketError(.malformedResponse)
        }
        guard statusCode == "101" else { throw WebSocketError(.status) }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
                throw WebSocketError(.malformedResponse)
            }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingASCIISpaces()
            headers.append((name, value))
        }
        func values(_ name: String) -> [String] { headers.filter { $0.name == name }.map(\.value) }
        guard values("upgrade").contains(where: { $0.lowercased() == "websocket" }) else {
            throw WebSocketError(.upgradeHeader)
        }
        let connectionTokens = values("connection").flatMap { $0.split(separator: ",") }.map {
            String($0).trimmingASCIISpaces().lowercased()
        }
        guard connectionTokens.contains("upgrade") else { throw WebSocketError(.connectionHeader) }
        let accepts = values("sec-websocket-accept")
        guard accepts.count == 1, accepts[0] == expectedAccept else { throw WebSocketError(.accept) }
        guard values("sec-websocket-extensions").isEmpty, values("sec-websocket-protocol").isEmpty else {
            throw WebSocketError(.unrequestedExtension)
        }
    }
}

extension String {
    fileprivate func trimmingASCIISpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}

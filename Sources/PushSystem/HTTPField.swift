/// One header field of an HTTP message (RFC 9110 §5), as the HTTP/1.1 server's responses and the
/// HTTP/2 client's and mock servers' messages carry it; HTTP/2 sends names lowercase (RFC 9113 §8.2.1).
public struct HTTPField: Sendable, Equatable {
    public let name: String
    public let value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

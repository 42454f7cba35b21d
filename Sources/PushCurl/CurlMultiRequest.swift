public import PushSystem

/// The address a request must connect to, checked by the caller (docs/protocol.md §8b: "the
/// address that was checked is the one connected to"). libcurl never resolves the URL's host: the
/// connection goes to `addressBytes` (`CURLOPT_CONNECT_TO`), while TLS SNI, certificate
/// verification and `Host`/`:authority` stay the URL's host.
public struct CurlPinnedAddress: Sendable, Hashable {
    /// The URL's host exactly as in the URL (an IPv6 literal without brackets).
    public let host: String
    public let port: Int
    /// 4 or 16 network-order bytes.
    public let addressBytes: [UInt8]

    public init?(host: String, port: Int, addressBytes: [UInt8]) {
        guard addressBytes.count == 4 || addressBytes.count == 16, (1...65535).contains(port) else { return nil }
        self.host = host
        self.port = port
        self.addressBytes = addressBytes
    }

    /// The address as a URL authority's host: dotted decimal, or bracketed full-form IPv6.
    public var literal: String {
        if addressBytes.count == 4 { return addressBytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 16, by: 2).map {
            String(UInt16(addressBytes[$0]) << 8 | UInt16(addressBytes[$0 + 1]), radix: 16)
        }
        return "[" + groups.joined(separator: ":") + "]"
    }

    /// `CURLOPT_CONNECT_TO`'s entry `HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT`.
    var connectToEntry: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "\(hostPart):\(port):\(literal):\(port)"
    }
}

/// One request of `CurlMultiClient`: what is sent. Where it connects and by when it must end are
/// the send's own arguments (`CurlMultiClient.send(_:to:before:completion:)`).
public struct CurlMultiRequest: Sendable {
    /// An absolute `https` URL.
    public let url: String
    /// `Name: value` lines without CRLF.
    public let headers: [String]
    public let body: [UInt8]

    public init(url: String, headers: [String], body: [UInt8]) {
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// What the server answered. The body is not kept (docs/protocol.md §8b: response bodies are
/// ignored); only its size is bounded.
public struct CurlMultiResponse: Sendable, Equatable {
    public let status: Int
    /// The last `Retry-After` field value of the final response, trimmed; nil when absent.
    public let retryAfter: String?
    /// 11 for HTTP/1.1, 20 for HTTP/2 (what ALPN chose).
    public let httpVersion: Int

    public init(status: Int, retryAfter: String?, httpVersion: Int) {
        self.status = status
        self.retryAfter = retryAfter
        self.httpVersion = httpVersion
    }
}

/// Why a request got no usable answer.
public struct CurlMultiFailure: Error, Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// The deadline passed first.
        case timeout
        /// Connect, TLS, proxy or protocol failure.
        case transport
        /// A response head over the head limit or a body over the body limit (the connection is
        /// not reused).
        case responseTooLarge
        /// libcurl was about to open a socket to an address other than the pinned one.
        case addressVetoed
        /// The client is shut down or libcurl refused the request's options.
        case unavailable
    }

    public let kind: Kind
    /// libcurl's fixed text for its error code or a fixed sentence: no URL, header or body.
    public let description: String

    public init(_ kind: Kind, description: String) {
        self.kind = kind
        self.description = description
    }
}

/// The received request URL of docs/protocol.md §2: `scheme://authority/path?query`, rebuilt from what the
/// TLS-terminating proxy forwarded. NIP-98's `u` tag must equal it byte for byte.
public struct ReceivedRequestURL: Sendable, Equatable {
    /// `http` or `https`.
    public let scheme: String
    /// The `Host` header exactly as received, port included.
    public let authority: String
    /// The origin-form request-target exactly as received (`/path?query`).
    public let requestTarget: String

    /// Builds the URL from the request's `Host` value, its `X-Forwarded-Proto` value (several field lines
    /// joined with commas, or nil when absent) and its request-target. Nil when the URL is undefined: an
    /// `X-Forwarded-Proto` whose first value is neither `http` nor `https`, a missing or malformed `Host`,
    /// or a request-target that is not origin-form (docs/decisions/0042-received-request-url.md).
    public init?(host: String?, forwardedProto: String?, requestTarget: String) {
        let scheme: String
        if let forwardedProto {
            // RFC 9110 §5.3: several values are a comma list; the proxy nearest the client wrote the first.
            let first =
                forwardedProto.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
                .first.map { Self.trimmingWhitespace($0) } ?? []
            if first.elementsEqual("https".utf8) {
                scheme = "https"
            } else if first.elementsEqual("http".utf8) {
                scheme = "http"
            } else {
                return nil
            }
        } else {
            scheme = "http"
        }
        // RFC 9110 §7.2: Host is uri-host [":" port]; characters that end or re-split an authority
        // (`/ ? # @`), whitespace, controls and non-ASCII cannot be part of one.
        guard let host, !host.utf8.isEmpty,
            host.utf8.allSatisfy({ Self.isVisibleASCII($0) && !"/?#@".utf8.contains($0) })
        else { return nil }
        // RFC 9112 §3.2.1: origin-form is absolute-path ["?" query]; a fragment is never sent.
        guard requestTarget.utf8.first == UInt8(ascii: "/"),
            requestTarget.utf8.allSatisfy({ Self.isVisibleASCII($0) && $0 != UInt8(ascii: "#") })
        else { return nil }
        self.scheme = scheme
        self.authority = host
        self.requestTarget = requestTarget
    }

    /// `scheme://authority`, the form `PUSH_GATEWAY_PUBLIC_ORIGINS` lists.
    public var origin: String { scheme + "://" + authority }

    /// `scheme://authority/path?query`.
    public var string: String { origin + requestTarget }

    private static func isVisibleASCII(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F
    }

    private static func trimmingWhitespace(_ bytes: Substring.UTF8View.SubSequence) -> [UInt8] {
        let isWhitespace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        return Array(bytes.drop(while: isWhitespace).reversed().drop(while: isWhitespace).reversed())
    }
}

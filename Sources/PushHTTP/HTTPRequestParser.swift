import Glibc

/// What `HTTPRequestParser.parse` found in the bytes it was given.
public enum HTTPParseResult: Sendable {
    /// The request so far is valid but incomplete.
    case needMoreData
    /// A complete request; `consumed` bytes of the input belong to it (the rest is the next request).
    case request(RequestHead, body: [UInt8], consumed: Int)
    /// The request is invalid; answer `error.status` and close.
    case failure(HTTPError)
}

/// Incremental HTTP/1.1 request parser: call `parse` with all unconsumed bytes whenever more arrive.
/// It remembers how far it scanned, so a head trickling in byte by byte is scanned once.
/// Limits come from docs/protocol.md §1: the head (request line + fields, and any empty lines before it)
/// at most `maxHeaderBytes`, and the body at most `bodyLimit(path)`, checked from `Content-Length`
/// before any body byte is read. The head is searched for only within its limit, so the outcome does
/// not depend on how the bytes were split into reads.
public struct HTTPRequestParser: Sendable {
    /// 16 KiB: docs/protocol.md §1.
    public static let defaultMaxHeaderBytes = 16 * 1024

    public let maxHeaderBytes: Int
    private let bodyLimit: @Sendable (String) -> Int
    /// Bytes of empty lines before the request line: scanned past so that a flood of them is a 431
    /// like any head that does not end within the limit, and then refused.
    private var skipped = 0
    /// Offset up to which the input was searched for the end of the head.
    private var scanned = 0
    /// The parsed head, once complete, and the offset where its body starts.
    private var head: RequestHead? = nil
    private var bodyStart = 0

    /// - Parameter bodyLimit: the largest body accepted for a path (the router's per-route limit).
    public init(
        maxHeaderBytes: Int = HTTPRequestParser.defaultMaxHeaderBytes,
        bodyLimit: @escaping @Sendable (_ path: String) -> Int
    ) {
        self.maxHeaderBytes = maxHeaderBytes
        self.bodyLimit = bodyLimit
    }

    /// True once the head of the current request is complete (its body may still be arriving).
    public var isHeadComplete: Bool { head != nil }

    /// The head of the current request once it is complete and has passed every check, while its body
    /// may still be arriving; nil before.
    public var completeHead: RequestHead? { head }

    /// True when the complete head of the current request is HTTP/1.1, asks `Expect: 100-continue`
    /// and has a body still to come: the server should send `100 Continue` (RFC 9110 §10.1.1).
    public var expectsContinue: Bool {
        guard let head, head.version == .http11, (head.contentLength ?? 0) > 0,
            let expect = head.headers.valueBytes("expect")
        else { return false }
        return expect.withUnsafeBytes { ASCII.equalsIgnoringCase($0, "100-continue") }
    }

    /// Parses `input`, which starts at the first unconsumed byte. Pass the same prefix again (plus
    /// any new bytes) until a result other than `.needMoreData`.
    public mutating func parse(_ input: UnsafeRawBufferPointer) -> HTTPParseResult {
        if head == nil {
            let end: Int
            switch findEndOfHead(input) {
            case .incomplete:
                if input.count > maxHeaderBytes {
                    return fail(HTTPError(.headTooLarge, reason: "head too large"))
                }
                return .needMoreData
            case .bareLineFeed:
                return fail(.badRequest("bare line feed"))
            case .found(let found):
                end = found
            }
            // RFC 9112 §2.2 lets a server ignore empty lines before the request line; h11 refuses them,
            // so accepting them could accept what neither llhttp nor h11 does (docs/decisions/0211).
            guard skipped == 0 else { return fail(.badRequest("empty line before the request line")) }
            let parsed: RequestHead
            do {
                parsed = try RequestHeadParser.parse(UnsafeRawBufferPointer(rebasing: input[..<end]))
            } catch {
                return fail(error)
            }
            // docs/protocol.md §1: requests with a body must carry Content-Length.
            if parsed.contentLength == nil && HTTPRequestParser.methodsWithBody.contains(parsed.method) {
                return fail(HTTPError(.lengthRequired, reason: "length required"))
            }
            if let length = parsed.contentLength, length > bodyLimit(parsed.path) {
                return fail(HTTPError(.contentTooLarge, reason: "body too large"))
            }
            head = parsed
            bodyStart = end
        }
        guard let head else { return .needMoreData }
        let length = head.contentLength ?? 0
        guard input.count - bodyStart >= length else { return .needMoreData }
        let total = bodyStart + length
        let body = length == 0 ? [] : Array(UnsafeRawBufferPointer(rebasing: input[bodyStart..<total]))
        reset()
        return .request(head, body: body, consumed: total)
    }

    /// Forgets any partial request.
    public mutating func reset() {
        skipped = 0
        scanned = 0
        head = nil
        bodyStart = 0
    }

    private static let methodsWithBody: Set<String> = ["POST", "PUT", "PATCH"]

    private mutating func fail(_ error: HTTPError) -> HTTPParseResult {
        reset()
        return .failure(error)
    }

    private enum HeadEnd {
        case incomplete
        case bareLineFeed
        case found(Int)
    }

    /// Finds the byte after the CR LF CR LF that ends the head, resuming where the last call stopped.
    /// Only the first `maxHeaderBytes` are searched: a head that has not ended there is too large
    /// whatever follows (and a flood of empty lines cannot make the connection buffer grow).
    private mutating func findEndOfHead(_ input: UnsafeRawBufferPointer) -> HeadEnd {
        guard let base = input.baseAddress, !input.isEmpty else { return .incomplete }
        let window = min(input.count, maxHeaderBytes)
        if scanned <= skipped {
            while skipped < window && input[skipped] == ASCII.carriageReturn {
                // A lone CR at the end may be the start of an empty line: wait for its LF.
                guard skipped + 1 < window else { return .incomplete }
                guard input[skipped + 1] == ASCII.lineFeed else { break }
                skipped += 2
            }
            scanned = skipped
        }
        var index = scanned
        while index < window {
            guard let found = memchr(base + index, Int32(ASCII.lineFeed), window - index) else {
                scanned = window
                return .incomplete
            }
            let lineFeed = base.distance(to: UnsafeRawPointer(found))
            // Lines end in CR LF; a bare LF is rejected rather than guessed at (RFC 9112 §2.2 allows either).
            guard lineFeed > skipped, input[lineFeed - 1] == ASCII.carriageReturn else { return .bareLineFeed }
            if lineFeed - 2 > skipped && input[lineFeed - 2] == ASCII.lineFeed { return .found(lineFeed + 1) }
            index = lineFeed + 1
            scanned = index
        }
        return .incomplete
    }
}

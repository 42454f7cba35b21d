/// Parses a complete head (request line through the empty line, CRLF line endings) in one pass.
/// Pure: no I/O, no allocation beyond the head copy, the field index and the few strings it returns.
enum RequestHeadParser {
    private static let http11Bytes = Array("HTTP/1.1".utf8)
    private static let http10Bytes = Array("HTTP/1.0".utf8)

    /// `head` must end with CR LF CR LF and contain no bare LF (the framer checked both).
    static func parse(_ head: UnsafeRawBufferPointer) throws(HTTPError) -> RequestHead {
        var index = 0

        // request-line = method SP request-target SP HTTP-version CRLF (RFC 9112 §3)
        while ASCII.isToken(head[index]) { index += 1 }
        guard index > 0, head[index] == ASCII.space else { throw .badRequest("bad request line: method") }
        let method = String(decoding: UnsafeRawBufferPointer(rebasing: head[0..<index]), as: UTF8.self)
        index += 1

        // Origin-form only (docs/protocol.md §2): "/" then visible ASCII. Control bytes, non-ASCII (hence any
        // invalid UTF-8) and "#" (fragments are never sent, RFC 9110 §4.2.5) are rejected.
        let targetStart = index
        var queryMark: Int? = nil
        while head[index] != ASCII.space {
            let byte = head[index]
            guard byte >= 0x21 && byte <= 0x7E && byte != 0x23 else { throw .badRequest("bad request target") }
            if byte == 0x3F && queryMark == nil { queryMark = index }
            index += 1
        }
        guard index > targetStart, head[targetStart] == 0x2F else { throw .badRequest("target not in origin-form") }
        let targetEnd = index
        index += 1

        let version: HTTPVersion
        guard index + 10 <= head.count else { throw .badRequest("bad request line: version") }
        let versionBytes = UnsafeRawBufferPointer(rebasing: head[index..<index + 8])
        if versionBytes.elementsEqual(http11Bytes) {
            version = .http11
        } else if versionBytes.elementsEqual(http10Bytes) {
            version = .http10
        } else {
            throw .badRequest("unsupported HTTP version")
        }
        index += 8
        guard head[index] == ASCII.carriageReturn, head[index + 1] == ASCII.lineFeed else {
            throw .badRequest("bad request line: trailing bytes")
        }
        index += 2

        var fields: [HTTPHeaders.Field] = []
        fields.reserveCapacity(12)
        var contentLength: Int? = nil
        var contentLengthValid = true
        var firstLengthElement: UnsafeRawBufferPointer? = nil
        var hasTransferEncoding = false
        var hostCount = 0
        var connectionClose = false
        var connectionKeepAlive = false

        // The field section ends at the empty line the framer found: the last two bytes of `head`. A line
        // that merely starts with CR is no end: it is a bare CR, refused like any other (docs/protocol.md §1).
        let endOfFields = head.count - 2
        while index < endOfFields {
            // A line starting with whitespace is obs-fold (or whitespace before the first field): RFC 9112 §5.2.
            guard head[index] != ASCII.space && head[index] != ASCII.tab else {
                throw .badRequest("obsolete line folding")
            }
            guard head[index] != ASCII.carriageReturn else { throw .badRequest("bare carriage return") }
            let nameStart = index
            while ASCII.isToken(head[index]) { index += 1 }
            // No whitespace is allowed between the field name and the colon (RFC 9112 §5.1).
            guard index > nameStart, head[index] == 0x3A else { throw .badRequest("bad header name") }
            let nameEnd = index
            index += 1
            while head[index] == ASCII.space || head[index] == ASCII.tab { index += 1 }
            let valueStart = index
            while head[index] != ASCII.carriageReturn {
                guard ASCII.isFieldValue(head[index]) else { throw .badRequest("bad header value") }
                index += 1
            }
            guard head[index + 1] == ASCII.lineFeed else { throw .badRequest("bare carriage return") }
            var valueEnd = index
            while valueEnd > valueStart && (head[valueEnd - 1] == ASCII.space || head[valueEnd - 1] == ASCII.tab) {
                valueEnd -= 1
            }
            index += 2

            let name = UnsafeRawBufferPointer(rebasing: head[nameStart..<nameEnd])
            let value = UnsafeRawBufferPointer(rebasing: head[valueStart..<valueEnd])
            switch name.count {
            case 4 where ASCII.equalsIgnoringCase(name, "host"):
                hostCount += 1
            case 10 where ASCII.equalsIgnoringCase(name, "connection"):
                forEachListElement(value) { element in
                    if ASCII.equalsIgnoringCase(element, "close") { connectionClose = true }
                    if ASCII.equalsIgnoringCase(element, "keep-alive") { connectionKeepAlive = true }
                }
            case 14 where ASCII.equalsIgnoringCase(name, "content-length"):
                // RFC 9112 §6.3: a list of identical values may be accepted as that value; anything
                // else (non-digits, empty elements, values that differ even only in leading zeros, across
                // repeated fields too) is a 400.
                forEachListElement(value) { element in
                    guard let length = parseLength(element) else {
                        contentLengthValid = false
                        return
                    }
                    if let first = firstLengthElement {
                        if !first.elementsEqual(element) { contentLengthValid = false }
                    } else {
                        firstLengthElement = element
                    }
                    contentLength = length
                }
                if value.isEmpty { contentLengthValid = false }
            case 17 where ASCII.equalsIgnoringCase(name, "transfer-encoding"):
                hasTransferEncoding = true
            default:
                break
            }
            fields.append(
                HTTPHeaders.Field(
                    name: Int32(nameStart)..<Int32(nameEnd), value: Int32(valueStart)..<Int32(valueEnd)))
        }

        // docs/protocol.md §1: any Transfer-Encoding, with or without Content-Length → 411.
        if hasTransferEncoding { throw HTTPError(.lengthRequired, reason: "transfer-encoding") }
        guard contentLengthValid else { throw .badRequest("bad content-length") }
        // RFC 9112 §3.2: exactly one Host in HTTP/1.1, at most one in HTTP/1.0.
        guard hostCount <= 1, version == .http10 || hostCount == 1 else { throw .badRequest("bad host") }

        let storage = Array(head)
        let path: String
        let query: String?
        if let queryMark {
            path = String(decoding: storage[targetStart..<queryMark], as: UTF8.self)
            query = String(decoding: storage[(queryMark + 1)..<targetEnd], as: UTF8.self)
        } else {
            path = String(decoding: storage[targetStart..<targetEnd], as: UTF8.self)
            query = nil
        }
        let target = queryMark == nil ? path : String(decoding: storage[targetStart..<targetEnd], as: UTF8.self)
        let keepAlive = !connectionClose && (version == .http11 || connectionKeepAlive)
        return RequestHead(
            method: method, target: target, path: path, query: query, version: version,
            headers: HTTPHeaders(storage: storage, fields: fields), contentLength: contentLength,
            keepAlive: keepAlive)
    }

    /// Calls `body` with each element of a comma-separated list, optional whitespace trimmed.
    private static func forEachListElement(
        _ value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void
    ) {
        var start = 0
        while start <= value.count {
            var end = start
            while end < value.count && value[end] != 0x2C { end += 1 }
            var low = start
            var high = end
            while low < high && (value[low] == ASCII.space || value[low] == ASCII.tab) { low += 1 }
            while high > low && (value[high - 1] == ASCII.space || value[high - 1] == ASCII.tab) { high -= 1 }
            body(UnsafeRawBufferPointer(rebasing: value[low..<high]))
            start = end + 1
        }
    }

    /// 1*DIGIT; values beyond `Int.max` saturate (they exceed every body limit and get a 413).
    private static func parseLength(_ digits: UnsafeRawBufferPointer) -> Int? {
        guard !digits.isEmpty else { return nil }
        var value = 0
        for byte in digits {
            guard ASCII.isDigit(byte) else { return nil }
            let (scaled, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = scaled.addingReportingOverflow(Int(byte - 0x30))
            value = overflow1 || overflow2 ? Int.max : sum
        }
        return value
    }
}

import PushHTTP

/// The HTTP/1.1 request parser, fed the input whole and again one byte at a time, request after
/// request (pipelining). Small limits so the 431 and 413 paths are reached with short inputs.
enum HTTPParserTarget {
    static let maxHeaderBytes = 512
    static let bodyLimit = 256

    /// What one `parse` call decided, comparable across the two ways of feeding.
    enum Outcome: Equatable {
        case needMoreData
        case request(HeadSummary, body: [UInt8], consumed: Int)
        case failure(status: Int)
    }

    struct HeadSummary: Equatable {
        let method: String
        let target: String
        let path: String
        let query: String?
        let version: HTTPVersion
        let headers: [String]
        let contentLength: Int?
        let keepAlive: Bool
    }

    static func run(_ input: UnsafeRawBufferPointer) {
        let whole = outcomes(input, feedByteByByte: false)
        let trickled = outcomes(input, feedByteByByte: true)
        FuzzCheck.require(whole == trickled, "whole-buffer and byte-by-byte parsing disagree")
    }

    private static func makeParser() -> HTTPRequestParser {
        HTTPRequestParser(maxHeaderBytes: maxHeaderBytes, bodyLimit: { _ in bodyLimit })
    }

    /// Parses request after request until one is incomplete or fails.
    private static func outcomes(_ input: UnsafeRawBufferPointer, feedByteByByte: Bool) -> [Outcome] {
        var parser = makeParser()
        var results: [Outcome] = []
        var start = 0
        while true {
            var outcome = Outcome.needMoreData
            if feedByteByByte {
                var end = start
                while end < input.count && outcome == .needMoreData {
                    end += 1
                    outcome = parse(&parser, UnsafeRawBufferPointer(rebasing: input[start..<end]))
                }
            } else {
                outcome = parse(&parser, UnsafeRawBufferPointer(rebasing: input[start...]))
            }
            results.append(outcome)
            guard case .request(_, _, let consumed) = outcome else { return results }
            start += consumed
        }
    }

    private static func parse(_ parser: inout HTTPRequestParser, _ input: UnsafeRawBufferPointer) -> Outcome {
        switch parser.parse(input) {
        case .needMoreData:
            // A head that cannot end within the limit must already have been refused.
            FuzzCheck.require(
                parser.isHeadComplete || input.count <= maxHeaderBytes, "over-limit head still waiting for more data")
            return .needMoreData
        case .failure(let error):
            FuzzCheck.require([400, 411, 413, 431].contains(error.status), "unexpected status \(error.status)")
            return .failure(status: error.status)
        case .request(let head, let body, let consumed):
            checkAccepted(head, body: body, consumed: consumed, input: input)
            return .request(summary(head), body: body, consumed: consumed)
        }
    }

    private static func checkAccepted(_ head: RequestHead, body: [UInt8], consumed: Int, input: UnsafeRawBufferPointer)
    {
        FuzzCheck.require(consumed > 0 && consumed <= input.count, "consumed \(consumed) of \(input.count)")
        FuzzCheck.require(body.count == (head.contentLength ?? 0), "body length differs from Content-Length")
        FuzzCheck.require(body.count <= bodyLimit, "body over its limit accepted")
        FuzzCheck.require(
            body.elementsEqual(input[(consumed - body.count)..<consumed]), "body is not the bytes after the head")
        // The limit counts empty lines before the request line too.
        let headBytes = consumed - body.count
        FuzzCheck.require(headBytes <= maxHeaderBytes, "head of \(headBytes) bytes accepted over the limit")
        // docs/protocol.md §1: no Transfer-Encoding, one unambiguous Content-Length — no smuggling shape passes.
        FuzzCheck.require(head.headers.values("transfer-encoding").isEmpty, "Transfer-Encoding accepted")
        for value in head.headers.values("content-length") {
            for element in value.split(separator: ",", omittingEmptySubsequences: false) {
                let trimmed = element.trimmingSpacesAndTabs
                FuzzCheck.require(
                    Int(trimmed) == head.contentLength, "Content-Length element differs from the length used")
            }
        }
        FuzzCheck.require(head.headers.values("host").count <= 1, "more than one Host accepted")
        // docs/protocol.md §1 strict head: every CR starts a CRLF and every LF ends one.
        for index in 0..<headBytes {
            if input[index] == 0x0D {
                FuzzCheck.require(index + 1 < headBytes && input[index + 1] == 0x0A, "bare CR accepted")
            }
            if input[index] == 0x0A {
                FuzzCheck.require(index > 0 && input[index - 1] == 0x0D, "bare LF accepted")
            }
        }
        FuzzCheck.require(!head.target.utf8.contains(0) && !head.path.isEmpty, "bad target accepted")
    }

    private static func summary(_ head: RequestHead) -> HeadSummary {
        HeadSummary(
            method: head.method, target: head.target, path: head.path, query: head.query, version: head.version,
            headers: head.headers.all.map { $0.name + ":" + $0.value }, contentLength: head.contentLength,
            keepAlive: head.keepAlive)
    }
}

extension Substring {
    fileprivate var trimmingSpacesAndTabs: Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return self[first...last]
    }
}

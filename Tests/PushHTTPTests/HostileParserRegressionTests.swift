import Foundation
import PushHTTP
import PushTestSupport
import Testing

/// Inputs the fuzzer (scripts/fuzz, target http-parser) found, kept as regressions.
@Suite("HTTP parser regressions found by fuzzing", .testBodyThreads)
struct HostileParserRegressionTests {
    /// Feeds `bytes` one at a time until the parser decides; its status (0 when it never does).
    private func bytewiseStatus(_ bytes: [UInt8], maxHeaderBytes: Int) -> Int {
        var parser = HTTPRequestParser(maxHeaderBytes: maxHeaderBytes) { _ in 256 }
        for end in 1...bytes.count {
            let result = bytes[0..<end].withUnsafeBytes { parser.parse($0) }
            if status(of: result) != 0 { return status(of: result) }
        }
        return 0
    }

    private func wholeStatus(_ bytes: [UInt8], maxHeaderBytes: Int) -> Int {
        var parser = HTTPRequestParser(maxHeaderBytes: maxHeaderBytes) { _ in 256 }
        return status(of: bytes.withUnsafeBytes { parser.parse($0) })
    }

    @Test("a head that has not ended within the limit is 431 whether it arrives whole or byte by byte")
    func fuzzReproducerSameOutcome() throws {
        // Fuzzer input (546 bytes, limit 512): a bare LF at offset 520, past the limit. Whole, the
        // parser used to search beyond the limit and answer 400; byte by byte it answered 431.
        let reproducer = try #require(
            Data(
                base64Encoded:
                    "UE9TVCAvdjEvZGUgSFRUUC8xLjENCkhvc3Q6IGgNCkNvbnRlbnQtTGVuZ3RoOiAwDQpUcmFuc2ZtY2VFLW5vZGluZzogY2h1b250ZW50LUxlbmctbmNvZmkvMS4xDQpIb3N0OiBoDQpDb250ZW50LUxlbmd0aDogMA0KVGFuc2ZlckUtbmNvZGluZzogY290dC1MZW5ndGg6IDENClRyOiAxDQpUcmFudDogaA0KQ3RoOiAxDQpUcmFuc2ZuZ3RoOiAxDQpUcmFubmc6IGNvdHQtTGVuZ3RoAAAAAAAAAAAAAAA6IDENClRyYW5zU0hvc3Q6IGgNCkNvbnRlbnQtTGVuZ3RoOiAxDQpUcmFuc2luZzogY251bmhlb3R0LUxlbmd0aDogMQ0KVHJhbnQ6IGgNCkN0aDogMVRUUC8xLjENCkhvc3Q6IGgNCkNvbnRlbnQtTGVuZ3RoOiAwDQpUcmFuc2ZtY2VFLW5vZGluZzogY2h1b250ZW50LUxlbmctbmNvZmkvMS4xDQpIb3N0OiBoDQpDb250ZW50LUxlbmd0aDogMA0KVGFuc2ZlckUtbmNvZGluZzogY290dC1MZW5ndGg6IDENClRyOiAxDQpUcmFudDogaA0KQ3RoOiAxDQpUcmFuc2ZuZ3RoOiAxDQpUcmFubmc6IA0KVHJhbnNmbmd0aDogMg1FClRyYW5zZmVyRS1uY2VkDQoNCjANCg0K"
            ))
        let bytes = [UInt8](reproducer)
        #expect(wholeStatus(bytes, maxHeaderBytes: 512) == 431)
        #expect(bytewiseStatus(bytes, maxHeaderBytes: 512) == 431)
    }

    @Test("a bare LF inside the limit is 400 whole and byte by byte")
    func bareLineFeedInsideLimit() {
        let bytes = Array("GET / HTTP/1.1\r\nHost: a\nX: 1\r\n\r\n".utf8)
        #expect(wholeStatus(bytes, maxHeaderBytes: 512) == 400)
        #expect(bytewiseStatus(bytes, maxHeaderBytes: 512) == 400)
    }

    @Test("empty lines before the request line count toward the head limit, so a flood of them is 431")
    func emptyLineFlood() {
        let flood: [UInt8] = (0..<64 * 1024).map { $0 % 2 == 0 ? 0x0D : 0x0A }
        #expect(wholeStatus(flood, maxHeaderBytes: HTTPRequestParser.defaultMaxHeaderBytes) == 431)
        // Just within the limit, the request after them is read and refused (decision 0211).
        let request = Array("GET /a HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        let fits = Array(flood[0..<(512 - request.count)]) + request
        #expect(wholeStatus(fits, maxHeaderBytes: 512) == 400)
        #expect(wholeStatus([0x0D, 0x0A] + fits, maxHeaderBytes: 512) == 431)
    }
}

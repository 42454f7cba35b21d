import PushCrypto
import PushHTTP
import PushSystem

/// The server side of one HTTP/1.1 connection over TLS, for a mock that answers with a responder
/// (a push service such as webpush-mock offers `http/1.1` beside `h2`, docs/protocol.md §8b): PushHTTP's
/// request parser reads the bytes the TLS session yields, its encoder writes the answers. One request
/// is answered at a time; pipelined bytes wait in `input` until the answer before them is queued.
final class HTTP1ServerConnection {
    private let tls: TLSConnection
    private var parser = HTTPRequestParser(bodyLimit: { _ in HTTP2ServerConnection.maximumRecordedBody })
    private var input: [UInt8] = []
    private var output: [UInt8] = []
    private var readBuffer = [UInt8](repeating: 0, count: 16_384)
    private var requestCount: Int32 = 0
    /// Whether the current request's `100 Continue` was queued (RFC 9110 §10.1.1).
    private var continueSent = false
    private(set) var wantsWrite = false
    /// True once a closing answer is queued: nothing more is parsed, and the connection ends when
    /// the output is written.
    private(set) var closesAfterOutput = false

    init(tls: TLSConnection) { self.tls = tls }

    var hasPendingOutput: Bool { !output.isEmpty }

    /// Reads what the TLS session has into `input`; false when the peer is gone or sends more than
    /// one request's limits would ever buffer.
    func readAvailable() -> Bool {
        tls.readAvailable(into: &readBuffer) { chunk in
            input.append(contentsOf: chunk)
            return input.count <= parser.maxHeaderBytes + HTTP2ServerConnection.maximumRecordedBody
        }
    }

    /// The next complete request in `input` as an HTTP/2-shaped request (`:method`, `:path`,
    /// `:authority` from `Host`, then the fields with lowercased names; its number as the stream id),
    /// and whether the client keeps the connection. A malformed request queues the parser's error
    /// status and closes after it; nil then, and while the request is incomplete.
    func nextRequest() -> (request: HTTP2ServerConnection.Request, keepAlive: Bool)? {
        guard !closesAfterOutput, !input.isEmpty else { return nil }
        let result = input.withUnsafeBytes { parser.parse($0) }
        switch result {
        case .needMoreData:
            // A client that asked `Expect: 100-continue` waits for this before it sends the body.
            if parser.expectsContinue, !continueSent {
                output += Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
                continueSent = true
            }
            return nil
        case .failure(let error):
            respond(status: error.status, headers: [], body: [], close: true)
            return nil
        case .request(let head, let body, let consumed):
            input.removeFirst(consumed)
            continueSent = false
            requestCount += 1
            var fields = [HTTPField(":method", head.method), HTTPField(":path", head.target)]
            if let host = head.headers["host"] { fields.append(HTTPField(":authority", host)) }
            fields += head.headers.all.map { HTTPField($0.name.lowercased(), $0.value) }
            return (HTTP2ServerConnection.Request(streamID: requestCount, fields: fields, body: body), head.keepAlive)
        }
    }

    /// Queues an answer; with `close` the connection ends once it is written.
    func respond(status: Int, headers: [HTTPField], body: [UInt8], close: Bool) {
        ResponseEncoder.encode(Response(status: status, headers: headers, body: body), close: close, into: &output)
        if close { closesAfterOutput = true }
    }

    /// Writes the queued output until the socket would block; false when the peer is gone.
    func flush() -> Bool {
        while !output.isEmpty {
            let result: TLSTransfer
            do {
                result = try output.withUnsafeBytes { bytes throws(CryptoError) in try tls.write(bytes) }
            } catch {
                return false
            }
            switch result {
            case .transferred(let count):
                output.removeFirst(count)
            case .wantRead, .wantWrite:
                wantsWrite = true
                return true
            case .closed:
                return false
            }
        }
        wantsWrite = false
        return true
    }
}

/// Serializes responses as HTTP/1.1 into a reusable byte buffer, without Foundation.
public enum ResponseEncoder {
    /// Appends the encoded response to `output`. `close` adds `Connection: close`; `keepAliveHTTP10`
    /// adds `Connection: keep-alive` (an HTTP/1.0 client only keeps the connection when told so).
    public static func encode(
        _ response: Response, close: Bool, keepAliveHTTP10: Bool = false, into output: inout [UInt8]
    ) {
        output.reserveCapacity(output.count + 128 + response.body.count)
        append("HTTP/1.1 ", to: &output)
        appendDecimal(response.status, to: &output)
        output.append(0x20)
        append(reasonPhrase(response.status), to: &output)
        output.append(contentsOf: crlf)
        for field in response.headers where !isFramingField(field.name) {
            append(field.name, to: &output)
            output.append(contentsOf: colonSpace)
            append(field.value, to: &output)
            output.append(contentsOf: crlf)
        }
        append("Content-Length: ", to: &output)
        appendDecimal(response.body.count, to: &output)
        output.append(contentsOf: crlf)
        if close {
            append("Connection: close\r\n", to: &output)
        } else if keepAliveHTTP10 {
            append("Connection: keep-alive\r\n", to: &output)
        }
        output.append(contentsOf: crlf)
        output.append(contentsOf: response.body)
    }

    /// Encodes into a fresh array.
    public static func encode(_ response: Response, close: Bool, keepAliveHTTP10: Bool = false) -> [UInt8] {
        var output: [UInt8] = []
        encode(response, close: close, keepAliveHTTP10: keepAliveHTTP10, into: &output)
        return output
    }

    private static let crlf: [UInt8] = [0x0D, 0x0A]
    private static let colonSpace: [UInt8] = [0x3A, 0x20]

    private static func append(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { output.append(contentsOf: $0) }
    }

    private static func appendDecimal(_ value: Int, to output: inout [UInt8]) {
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var remaining = max(0, value)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(0x30 + remaining % 10)
                remaining /= 10
                count += 1
            } while remaining > 0
            output.append(contentsOf: buffer[(20 - count)...])
        }
    }

    /// The server owns message framing (RFC 9112 §6); a handler cannot set these.
    private static func isFramingField(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered == "content-length" || lowered == "connection" || lowered == "transfer-encoding"
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status"
        }
    }
}

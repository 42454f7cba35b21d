import Glibc
import PushSystem

/// A blocking HTTP/1.1 keep-alive client connection to `127.0.0.1:port`: writes a prepared request
/// and reads exactly one response (status line, header fields, `Content-Length` body).
struct KeepAliveConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private(set) var descriptor: Int32
    let port: Int
    private var buffer: [UInt8] = []

    init(port: Int) throws(Failure) {
        self.port = port
        descriptor = try Self.connect(port: port)
    }

    static func connect(port: Int) throws(Failure) -> Int32 {
        do throws(SystemError) {
            let address = SocketAddress(family: .ipv4, host: "127.0.0.1", port: UInt16(port))
            return try TCPConnector.connect(to: address).release()
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    func close() { _ = Glibc.close(descriptor) }

    /// Writes `request` and returns the response's status code; after a response that closes the
    /// connection (or a broken one) the next call reconnects.
    mutating func exchange(_ request: [UInt8]) throws(Failure) -> Int {
        try exchangeForBody(request).status
    }

    /// `exchange` that also returns the response's body.
    mutating func exchangeForBody(_ request: [UInt8]) throws(Failure) -> (status: Int, body: [UInt8]) {
        if descriptor < 0 { descriptor = try Self.connect(port: port) }
        var written = 0
        while written < request.count {
            let count = request.withUnsafeBytes { send(descriptor, $0.baseAddress! + written, $0.count - written, 0) }
            guard count > 0 else { throw dropConnection("send") }
            written += count
        }
        return try readResponse()
    }

    private mutating func dropConnection(_ what: String) -> Failure {
        let failure = Failure(description: "\(what): errno \(errno)")
        close()
        descriptor = -1
        buffer.removeAll(keepingCapacity: true)
        return failure
    }

    private mutating func readResponse() throws(Failure) -> (status: Int, body: [UInt8]) {
        var headEnd: Int?
        while true {
            headEnd = HTTPHead.end(in: buffer)
            if headEnd != nil { break }
            try fill()
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.count >= 12, let status = Int(statusLine.dropFirst(9).prefix(3))
        else { throw dropConnection("malformed status line") }
        var contentLength = 0
        var closes = false
        for line in lines.dropFirst() {
            let field = line.lowercased()
            if field.hasPrefix("content-length:") {
                contentLength = Int(String(field.dropFirst(15).filter { $0 != " " && $0 != "\t" })) ?? 0
            } else if field.hasPrefix("connection:") && field.contains("close") {
                closes = true
            }
        }
        let total = headEnd! + 4 + contentLength
        while buffer.count < total { try fill() }
        let body = Array(buffer[(headEnd! + 4)..<total])
        buffer.removeFirst(total)
        if closes {
            close()
            descriptor = -1
            buffer.removeAll(keepingCapacity: true)
        }
        return (status, body)
    }

    private mutating func fill() throws(Failure) {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress!, $0.count, 0) }
        guard count > 0 else { throw dropConnection(count == 0 ? "closed by the gateway" : "recv") }
        buffer += chunk[..<count]
    }
}

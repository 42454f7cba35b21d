import Glibc
import PushSystem

/// A response read by `HTTPTestClient`.
public struct HTTPTestResponse: Sendable {
    public let status: Int
    /// Header fields with lowercased names, in received order.
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// First value of a header (name compared lowercased).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name == wanted }?.value
    }
}

/// Errors of the raw test client.
public enum HTTPTestClientError: Error, Equatable {
    case system(SystemError)
    /// The server closed the connection before a whole response arrived.
    case closedByPeer
    /// Nothing (or not enough) arrived within the receive timeout.
    case timedOut
    case malformedResponse
}

/// A blocking raw-socket HTTP/1.1 client for live server tests: sends exact bytes (including
/// malformed ones) and reads responses byte-exactly. Every read has a timeout, so a test fails
/// instead of hanging.
public final class HTTPTestClient {
    private let socket: FileDescriptor
    private var buffer: [UInt8] = []

    /// Connects to `host:port` (IPv4, or IPv6 when `host` has a colon, e.g. `::1`); reads time out
    /// after `timeout`. With `source`, the socket is first bound to that local address (e.g.
    /// `127.0.0.2`, a second loopback peer).
    public init(
        port: Int, host: String = "127.0.0.1", source: String? = nil, timeout: Duration = .seconds(5)
    ) throws(HTTPTestClientError) {
        let family = host.contains(":") ? AF_INET6 : AF_INET
        let raw = Glibc.socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard raw >= 0 else { throw .system(SystemError(function: "socket", errorNumber: errno)) }
        socket = FileDescriptor(owning: raw)
        if let source {
            let bound = Self.withAddress(source, port: 0, family: family) { Glibc.bind(raw, $0, $1) }
            guard bound == 0 else { throw .system(SystemError(function: "bind", errorNumber: errno)) }
        }
        let result = Self.withAddress(host, port: port, family: family) { Glibc.connect(raw, $0, $1) }
        guard result == 0 else { throw .system(SystemError(function: "connect", errorNumber: errno)) }
        setReceiveTimeout(timeout)
    }

    /// Calls `body` with `host:port` as a C socket address of `family`.
    private static func withAddress(
        _ host: String, port: Int, family: Int32, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) -> Int32 {
        func call<Address>(_ address: inout Address) -> Int32 {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
            }
        }
        if family == AF_INET6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            return call(&address)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        return call(&address)
    }

    /// Changes the receive timeout for following reads.
    public func setReceiveTimeout(_ timeout: Duration) {
        let nanoseconds = timeout.nanosecondsClamped
        var value = timeval(tv_sec: Int(nanoseconds / 1_000_000_000), tv_usec: Int(nanoseconds % 1_000_000_000 / 1000))
        setsockopt(socket.rawValue, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Closes both directions; the server sees end of stream. Further calls fail.
    public func shutdown() {
        _ = Glibc.shutdown(socket.rawValue, Int32(SHUT_RDWR))
    }

    /// Sends all of `bytes`.
    public func send(_ bytes: [UInt8]) throws(HTTPTestClientError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                Glibc.send(socket.rawValue, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                throw .system(SystemError(function: "send", errorNumber: errno))
            }
            offset += sent
        }
    }

    /// Sends the UTF-8 bytes of `text`.
    public func send(_ text: String) throws(HTTPTestClientError) {
        try send(Array(text.utf8))
    }

    /// Reads one response (status line, headers, `Content-Length` body).
    public func readResponse() throws(HTTPTestClientError) -> HTTPTestResponse {
        var headEnd: Int? = nil
        while true {
            if let end = findHeadEnd() {
                headEnd = end
                break
            }
            try fill()
        }
        guard let headEnd else { throw .malformedResponse }
        let headText = String(decoding: buffer[0..<headEnd - 4], as: UTF8.self)
        var lines = headText.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty else { throw .malformedResponse }
        let statusParts = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0] == "HTTP/1.1", let status = Int(statusParts[1]) else {
            throw .malformedResponse
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw .malformedResponse }
            let value = line[line.index(after: colon)...].trimmingPrefix(" ")
            headers.append((line[..<colon].lowercased(), String(value)))
        }
        guard let lengthText = headers.first(where: { $0.name == "content-length" })?.value,
            let length = Int(lengthText)
        else { throw .malformedResponse }
        while buffer.count < headEnd + length { try fill() }
        let body = Array(buffer[headEnd..<headEnd + length])
        buffer.removeSubrange(0..<headEnd + length)
        return HTTPTestResponse(status: status, headers: headers, body: body)
    }

    /// Reads exactly `count` raw bytes (e.g. an interim `100 Continue`).
    public func readBytes(_ count: Int) throws(HTTPTestClientError) -> [UInt8] {
        while buffer.count < count { try fill() }
        let bytes = Array(buffer[0..<count])
        buffer.removeSubrange(0..<count)
        return bytes
    }

    /// True when the server closed the connection (end of stream or reset) with no further bytes;
    /// false when bytes arrived. Throws `.timedOut` when the connection stayed open.
    public func isClosedByPeer() throws(HTTPTestClientError) -> Bool {
        if !buffer.isEmpty { return false }
        do {
            try fill()
            return false
        } catch .closedByPeer {
            return true
        } catch .system(let error) where error.errorNumber == ECONNRESET {
            return true
        }
    }

    private func fill() throws(HTTPTestClientError) {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.recv(socket.rawValue, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return
            }
            if count == 0 { throw .closedByPeer }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw .timedOut }
            throw .system(SystemError(function: "recv", errorNumber: errno))
        }
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 3..<buffer.count
        where buffer[index] == 0x0A && buffer[index - 1] == 0x0D && buffer[index - 2] == 0x0A
            && buffer[index - 3] == 0x0D
        {
            return index + 1
        }
        return nil
    }
}

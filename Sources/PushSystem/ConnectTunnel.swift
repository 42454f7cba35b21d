/// The client side of an HTTP `CONNECT` tunnel through a forward proxy (docs/protocol.md §12): the
/// request goes first, then the client reads the proxy's answer head; a 2xx opens the tunnel, after
/// which the socket carries the caller's own stream (TLS, or plain WebSocket). Pure;
/// `FileDescriptor.advance(_:)` carries it out on a non-blocking socket.
public struct ConnectTunnel: Sendable {
    public enum Progress: Equatable, Sendable {
        /// The socket would block; advance again when it is ready (`isWriting` says for what).
        case pending
        case open
        /// The tunnel cannot open; the text says why, for one log line or a transport failure.
        case failed(String)
    }

    /// A proxy's answer to `CONNECT` longer than this is refused.
    public static let maximumResponse = 8_192

    public let request: [UInt8]
    private var requestOffset = 0
    private var response: [UInt8] = []

    /// The tunnel to `host:port` (an IPv6 literal goes in brackets).
    public init(host: String, port: UInt16) {
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        request = Array("CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n\r\n".utf8)
    }

    /// True until the whole request is sent: the socket must become writable, else readable.
    public var isWriting: Bool { requestOffset < request.count }

    /// What is left of the request to send.
    public var unsent: ArraySlice<UInt8> { request[requestOffset...] }

    public mutating func sent(_ count: Int) { requestOffset += count }

    /// Takes bytes of the proxy's answer (none: it closed the connection); nil while the head is
    /// incomplete.
    public mutating func receive(_ bytes: ArraySlice<UInt8>) -> Progress? {
        guard !bytes.isEmpty else { return .failed("the proxy closed the connection") }
        response += bytes
        if let status = Self.status(ofHead: response) {
            guard (200..<300).contains(status) else { return .failed("the proxy refused the tunnel (HTTP \(status))") }
            return .open
        }
        guard response.count <= Self.maximumResponse else { return .failed("the proxy's answer is too long") }
        return nil
    }

    /// The status code of a complete response head (`HTTP/1.x NNN …\r\n…\r\n\r\n`); nil while
    /// incomplete, 0 when it is not HTTP.
    private static func status(ofHead head: [UInt8]) -> Int? {
        guard HTTPHead.end(in: head) != nil else { return nil }
        let line = String(decoding: head.prefix { $0 != 0x0D }, as: UTF8.self).split(separator: " ")
        guard line.count >= 2, line[0].hasPrefix("HTTP/1."), line[1].count == 3, let status = Int(line[1]) else {
            return 0
        }
        return status
    }
}

extension FileDescriptor {
    /// Sends what is left of the tunnel's request, then reads the proxy's answer until it is
    /// complete or the socket would block.
    public func advance(_ tunnel: inout ConnectTunnel) -> ConnectTunnel.Progress {
        // A scratch buffer rather than closures over arrays: a borrowed descriptor cannot be captured.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1_024, tunnel.request.count), alignment: 1)
        defer { buffer.deallocate() }
        do throws(SystemError) {
            while tunnel.isWriting {
                let unsent = tunnel.unsent
                buffer.copyBytes(from: unsent)
                let result = try send(UnsafeRawBufferPointer(rebasing: buffer[..<unsent.count]))
                guard case .value(let count) = result else { return .pending }
                tunnel.sent(count)
            }
            while true {
                guard case .value(let count) = try receive(into: buffer) else { return .pending }
                if let progress = tunnel.receive(ArraySlice(buffer[..<count])) { return progress }
            }
        } catch {
            return .failed("proxy: \(error)")
        }
    }
}

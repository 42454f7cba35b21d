import Glibc
import PushSystem

/// A connected pair of non-blocking Unix stream sockets: one end for the code under test (taken
/// with `takeServerEnd()`), the other for the test, which plays the peer.
public final class SocketPair {
    private var serverEnd: Int32
    /// The test's end; closed with the pair unless closed earlier.
    public private(set) var peer: Int32

    public init() {
        var ends: [Int32] = [-1, -1]
        let created = socketpair(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0,
            &ends)
        precondition(created == 0, "socketpair failed: errno \(errno)")
        serverEnd = ends[0]
        peer = ends[1]
    }

    deinit {
        if serverEnd >= 0 { Glibc.close(serverEnd) }
        if peer >= 0 { Glibc.close(peer) }
    }

    /// The other end, still owned by the pair.
    public var serverDescriptor: Int32 { serverEnd }

    /// Hands the other end to its new owner (once).
    public func takeServerEnd() -> FileDescriptor {
        precondition(serverEnd >= 0, "the server end was already taken")
        defer { serverEnd = -1 }
        return FileDescriptor(owning: serverEnd)
    }

    /// Writes all of `text` from the peer's end (the socket buffer holds far more than a test sends).
    public func send(_ text: String) {
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(peer, $0.baseAddress, $0.count) }
        precondition(written == bytes.count, "short write to a socketpair: \(written) of \(bytes.count)")
    }

    /// What the peer can read now, without waiting, and whether the other end has closed its
    /// writing side (end of stream reached).
    public func receiveAvailable() -> (text: String, ended: Bool) {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(peer, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes.append(contentsOf: buffer[0..<count])
                continue
            }
            return (String(decoding: bytes, as: UTF8.self), count == 0 || (count < 0 && errno != EAGAIN))
        }
    }

    /// Closes the peer's end (the client leaves).
    public func closePeer() {
        if peer >= 0 { Glibc.close(peer) }
        peer = -1
    }
}

import Glibc
import Synchronization

/// A non-blocking listening TCP socket. The descriptor is owned: closed by `close()` (idempotent,
/// used to stop accepting during a drain) or at deinit.
public final class TCPListener: Sendable {
    /// The bound address; with port 0 requested, this holds the ephemeral port the kernel chose.
    public let localAddress: SocketAddress
    private let descriptor: Atomic<Int32>

    /// Binds and listens on `address` with `SO_REUSEADDR`.
    public init(address: SocketAddress, backlog: Int32 = 1024) throws(SystemError) {
        let domain = address.family == .ipv4 ? AF_INET : AF_INET6
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let socket = FileDescriptor(owning: try Syscall.call("socket") { Glibc.socket(domain, type, 0) })
        var on: Int32 = 1
        _ = try Syscall.call("setsockopt") {
            setsockopt(socket.rawValue, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        _ = try Syscall.call("bind") { address.withSockaddr { bind(socket.rawValue, $0, $1) } }
        _ = try Syscall.call("listen") { listen(socket.rawValue, backlog) }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try Syscall.call("getsockname") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket.rawValue, $0, &length) }
            }
        }
        localAddress = SocketAddress.from(storage: &storage) ?? address
        // Ownership moves to the atomic slot; `close()`/deinit release it.
        descriptor = Atomic(socket.release())
    }

    /// Binds and listens on a `host:port` string.
    public convenience init(listening text: String, backlog: Int32 = 1024) throws(SystemError) {
        try self.init(address: try SocketAddress(parsing: text), backlog: backlog)
    }

    deinit { close() }

    /// The listening descriptor, or nil once closed. For registering with an `Epoll`.
    public var rawDescriptor: Int32? {
        let value = descriptor.load(ordering: .acquiring)
        return value >= 0 ? value : nil
    }

    /// The bound port.
    public var port: Int { Int(localAddress.port) }

    /// Accepts one pending connection as a non-blocking, close-on-exec socket; nil when none is
    /// pending or the listener is closed. `peer` receives the client's numeric host.
    public func accept(peer: inout String) throws(SystemError) -> FileDescriptor? {
        let listening = descriptor.load(ordering: .acquiring)
        guard listening >= 0 else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = try Syscall.nonBlocking("accept") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(listening, $0, &length) }
            }
        }
        guard case .value(let raw) = result else { return nil }
        let socket = FileDescriptor(owning: raw)
        try socket.setNonBlocking()
        try socket.setCloseOnExec()
        peer = SocketAddress.from(storage: &storage)?.host ?? ""
        return socket
    }

    /// Stops listening: new connection attempts are refused from now on. Idempotent.
    public func close() {
        let old = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        if old >= 0 { _ = Glibc.close(old) }
    }
}

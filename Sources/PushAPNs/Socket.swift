import Glibc
import Synchronization

// The few socket calls the APNs I/O thread and apns-mock need. PushSystem owns the general
// syscall layer; this stays internal so the two can be unified later without API changes.

/// One resolved address in `sockaddr_storage` form.
struct SocketAddress: Sendable {
    let storage: [UInt8]
    let family: Int32

    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        storage.withUnsafeBytes { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(storage.count))
        }
    }
}

/// A failed system call: the function and errno, nothing from the caller's data.
struct SocketError: Error, Sendable, CustomStringConvertible {
    let function: String
    let code: Int32

    var description: String { "\(function): \(String(cString: strerror(code)))" }
}

enum Socket {
    /// Resolves `host` (DNS name or IP literal) for TCP. Blocking for DNS names: callers run it off
    /// the I/O thread.
    static func resolve(host: String, port: UInt16) throws(SocketError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else { throw SocketError(function: "getaddrinfo", code: EHOSTUNREACH) }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor {
            if let address = entry.pointee.ai_addr {
                let bytes = UnsafeRawBufferPointer(start: address, count: Int(entry.pointee.ai_addrlen))
                addresses.append(SocketAddress(storage: Array(bytes), family: entry.pointee.ai_family))
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }

    static func isIPLiteral(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// Starts a non-blocking connect; the caller waits for POLLOUT and then checks `pendingError`.
    static func startConnect(to address: SocketAddress) throws(SocketError) -> Int32 {
        let descriptor = socket(address.family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SocketError(function: "socket", code: errno) }
        do throws(SocketError) {
            try setNonBlocking(descriptor)
            var one: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let result = address.withSockaddr { connect(descriptor, $0, $1) }
            guard result == 0 || errno == EINPROGRESS else { throw SocketError(function: "connect", code: errno) }
            return descriptor
        } catch {
            close(descriptor)
            throw error
        }
    }

    static func setNonBlocking(_ descriptor: Int32) throws(SocketError) {
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw SocketError(function: "fcntl", code: errno)
        }
    }

    /// The outcome of a finished non-blocking connect (0 when it succeeded).
    static func pendingError(_ descriptor: Int32) -> Int32 {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length) == 0 else { return errno }
        return code
    }

    /// A listening TCP socket on `host:port` (port 0 picks one); returns the descriptor and port.
    static func listen(host: String, port: UInt16) throws(SocketError) -> (descriptor: Int32, port: UInt16) {
        guard let address = try resolve(host: host, port: port).first else {
            throw SocketError(function: "getaddrinfo", code: EADDRNOTAVAIL)
        }
        let descriptor = socket(address.family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SocketError(function: "socket", code: errno) }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard address.withSockaddr({ bind(descriptor, $0, $1) }) == 0 else {
            let code = errno
            close(descriptor)
            throw SocketError(function: "bind", code: code)
        }
        guard Glibc.listen(descriptor, 512) == 0 else {
            let code = errno
            close(descriptor)
            throw SocketError(function: "listen", code: code)
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        let family = Int32(storage.ss_family)
        let boundPort: UInt16 = withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    UInt16(bigEndian: $0.pointee.sin6_port)
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                UInt16(bigEndian: $0.pointee.sin_port)
            }
        }
        return (descriptor, boundPort)
    }

    /// Waits up to `milliseconds` for `events` on one descriptor; returns the revents (0 on timeout).
    static func wait(_ descriptor: Int32, events: Int16, milliseconds: Int32) -> Int16 {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        let result = poll(&entry, 1, milliseconds)
        return result > 0 ? entry.revents : 0
    }
}

/// A non-blocking pipe another thread writes to so a thread blocked in poll() wakes up.
final class WakeSignal: Sendable {
    /// The end the waiting thread polls for POLLIN.
    let descriptor: Int32
    private let writeDescriptor: Int32
    /// True from the first `signal()` until the next `drain()`: later signals skip the write(2),
    /// so a burst of submissions costs one system call, not one per request.
    private let pending = Atomic<Bool>(false)

    init() throws(SocketError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw SocketError(function: "pipe", code: errno) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            try Socket.setNonBlocking(end)
        }
        descriptor = ends[0]
        writeDescriptor = ends[1]
    }

    deinit {
        close(descriptor)
        close(writeDescriptor)
    }

    func signal() {
        guard !pending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }

    /// Call before taking the queued commands. The pipe is emptied before the flag is cleared: a
    /// signal that skipped its write saw the flag still set, so its command is taken after this
    /// drain; clearing first would let the read swallow the byte of a signal that set the flag
    /// again, leaving the flag set over an empty pipe and every later signal unheard.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(descriptor, &buffer, buffer.count) > 0 {}
        pending.store(false, ordering: .sequentiallyConsistent)
    }
}

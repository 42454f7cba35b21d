import Glibc

/// Outgoing TCP: name resolution and non-blocking connects, for the HTTP/2 clients (APNs, FCM) and the
/// Marmot relay connections (through PushDial's `ClientDial`).
public enum TCPConnector {
    /// The addresses of `host` when it is an IP literal, without touching a resolver (so safe on an
    /// event-loop thread); nil for a DNS name.
    public static func numericAddresses(host: String, port: UInt16) -> [SocketAddress]? {
        try? lookUp(host: host, port: port, flags: AI_NUMERICHOST)
    }

    /// The addresses of `host` for a client on `loop`, handed to `completion` on the loop's thread:
    /// at once for an IP literal; for a DNS name, getaddrinfo (which blocks) runs on a worker of the
    /// loop's `Runtime` (docs/decisions/0870), or on a short-lived thread for a loop of its own, and
    /// its result comes back through `loop.execute`. A full worker queue or a thread that cannot
    /// start is a failed resolution, reported at once.
    public static func resolve(
        host: String, port: UInt16, on loop: EventLoop,
        completion: @escaping @Sendable (Result<[SocketAddress], SystemError>) -> Void
    ) {
        if let addresses = numericAddresses(host: host, port: port) { return completion(.success(addresses)) }
        let lookUp: @Sendable () -> Void = {
            let result: Result<[SocketAddress], SystemError>
            do throws(SystemError) {
                result = .success(try resolve(host: host, port: port))
            } catch {
                result = .failure(error)
            }
            loop.execute { completion(result) }
        }
        if let workers = loop.workers {
            if !workers.submit(lookUp) {
                completion(.failure(SystemError(function: "getaddrinfo", errorNumber: EAGAIN)))
            }
            return
        }
        do {
            _ = try PosixThread.spawn(name: "resolver", lookUp)
        } catch {
            completion(.failure(error))
        }
    }

    /// Resolves `host` (DNS name or IP literal). Blocking for DNS names: run it off event loops.
    public static func resolve(host: String, port: UInt16) throws(SystemError) -> [SocketAddress] {
        try lookUp(host: host, port: port, flags: 0)
    }

    private static func lookUp(host: String, port: UInt16, flags: Int32) throws(SystemError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = flags
        var list: UnsafeMutablePointer<addrinfo>?
        // getaddrinfo reports its own codes, not errno; EHOSTUNREACH stands for all of them.
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let list else {
            throw SystemError(function: "getaddrinfo", errorNumber: EHOSTUNREACH)
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor {
            if let raw = entry.pointee.ai_addr {
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) { target in
                    target.copyMemory(
                        from: UnsafeRawBufferPointer(
                            start: raw, count: min(Int(entry.pointee.ai_addrlen), target.count)))
                }
                if let address = SocketAddress.from(storage: &storage) { addresses.append(address) }
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }

    /// A blocking connect with `TCP_NODELAY`, for command-line tools (never on an event loop).
    public static func connect(to address: SocketAddress) throws(SystemError) -> FileDescriptor {
        let domain = address.family == .ipv4 ? AF_INET : AF_INET6
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let socket = FileDescriptor(owning: try Syscall.call("socket") { Glibc.socket(domain, type, 0) })
        _ = try Syscall.call("connect") { address.withSockaddr { Glibc.connect(socket.rawValue, $0, $1) } }
        try socket.setNoDelay()
        return socket
    }

    /// Starts a non-blocking connect with `TCP_NODELAY`; wait for writability, then read
    /// `pendingConnectError()`.
    public static func startConnect(to address: SocketAddress) throws(SystemError) -> FileDescriptor {
        let domain = address.family == .ipv4 ? AF_INET : AF_INET6
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let socket = FileDescriptor(owning: try Syscall.call("socket") { Glibc.socket(domain, type, 0) })
        try socket.setNoDelay()
        let result = address.withSockaddr { Glibc.connect(socket.rawValue, $0, $1) }
        guard result == 0 || errno == EINPROGRESS else { throw SystemError(function: "connect", errorNumber: errno) }
        return socket
    }
}

extension FileDescriptor {
    /// The outcome of a finished non-blocking connect on this socket: nil when it succeeded.
    public func pendingConnectError() -> SystemError? {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(rawValue, SOL_SOCKET, SO_ERROR, &code, &length) == 0 else {
            return SystemError(function: "getsockopt", errorNumber: errno)
        }
        return code == 0 ? nil : SystemError(function: "connect", errorNumber: code)
    }
}

import Glibc

extension FileDescriptor {
    /// Receives up to `buffer.count` bytes from a socket; `.value(0)` means the peer closed its side.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> NonBlockingResult<Int> {
        try Syscall.nonBlocking("recv") { Glibc.recv(rawValue, buffer.baseAddress, buffer.count, 0) }
    }

    /// Sends bytes on a socket. `MSG_NOSIGNAL`: a closed peer yields `EPIPE`, never a SIGPIPE.
    public func send(_ buffer: UnsafeRawBufferPointer) throws(SystemError) -> NonBlockingResult<Int> {
        try Syscall.nonBlocking("send") {
            Glibc.send(rawValue, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
        }
    }

    /// Half-closes the socket: the peer reads end of stream after what was already sent.
    public func shutdownWrite() {
        _ = Glibc.shutdown(rawValue, Int32(SHUT_WR))
    }

    /// Disables Nagle's algorithm so small responses leave at once.
    public func setNoDelay() throws(SystemError) {
        var on: Int32 = 1
        _ = try Syscall.call("setsockopt") {
            setsockopt(rawValue, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
    }
}

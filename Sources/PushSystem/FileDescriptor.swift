internal import CPushSystem
import Glibc

/// An owned file descriptor: closed exactly once, when the value is consumed or goes out of scope.
public struct FileDescriptor: ~Copyable, Sendable {
    /// The raw descriptor, for passing to C calls; never close it yourself.
    public let rawValue: Int32

    /// Takes ownership of `rawValue`.
    public init(owning rawValue: Int32) {
        self.rawValue = rawValue
    }

    deinit {
        // Not retried on EINTR: Linux releases the descriptor even when close is interrupted.
        _ = Glibc.close(rawValue)
    }

    /// Closes the descriptor now.
    public consuming func close() {}

    /// Gives up ownership without closing and returns the raw descriptor to its new owner.
    public consuming func release() -> Int32 {
        let value = rawValue
        discard self
        return value
    }

    /// Switches the descriptor to non-blocking mode.
    public func setNonBlocking() throws(SystemError) {
        _ = try Syscall.call("fcntl") { CPushSystem_set_nonblocking(rawValue) }
    }

    /// Marks the descriptor close-on-exec.
    public func setCloseOnExec() throws(SystemError) {
        _ = try Syscall.call("fcntl") { CPushSystem_set_cloexec(rawValue) }
    }

    /// Reads up to `buffer.count` bytes; `.value(0)` means end of stream.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> NonBlockingResult<Int> {
        try Syscall.nonBlocking("read") { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Writes up to `buffer.count` bytes and returns how many were taken.
    public func write(_ buffer: UnsafeRawBufferPointer) throws(SystemError) -> NonBlockingResult<Int> {
        try Syscall.nonBlocking("write") { Glibc.write(rawValue, buffer.baseAddress, buffer.count) }
    }
}

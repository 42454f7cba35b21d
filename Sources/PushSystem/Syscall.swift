import Glibc

/// The outcome of a call on a non-blocking descriptor: a value, or "try again later" (`EAGAIN`).
public enum NonBlockingResult<Value> {
    case value(Value)
    case wouldBlock
}

extension NonBlockingResult: Sendable where Value: Sendable {}

/// The one funnel every system call goes through: `-1` becomes a typed `SystemError` naming the
/// function, `EINTR` is retried, and (for the non-blocking variant) `EAGAIN` is a value.
public enum Syscall {
    /// Runs `body` until it does not fail with `EINTR`; any other `-1` throws.
    @inline(__always)
    public static func call<Result: FixedWidthInteger>(
        _ function: StaticString, _ body: () -> Result
    ) throws(SystemError) -> Result {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = errno
            if code == EINTR { continue }
            throw SystemError(function: "\(function)", errorNumber: code)
        }
    }

    /// Like `call`, but `EAGAIN`/`EWOULDBLOCK` is reported as `.wouldBlock` instead of thrown.
    @inline(__always)
    public static func nonBlocking<Result: FixedWidthInteger>(
        _ function: StaticString, _ body: () -> Result
    ) throws(SystemError) -> NonBlockingResult<Result> {
        while true {
            let result = body()
            if result != -1 { return .value(result) }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            throw SystemError(function: "\(function)", errorNumber: code)
        }
    }
}

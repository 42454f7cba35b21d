import Glibc

/// The process's `RLIMIT_NOFILE`: every connection the gateway holds is one descriptor, and the
/// usual default soft limit (1024) is far below what one replica can serve.
public struct OpenFileLimit: Sendable, Equatable {
    public let soft: UInt64
    public let hard: UInt64

    /// The current soft and hard limits.
    public static func current() throws(SystemError) -> OpenFileLimit {
        var limit = rlimit()
        _ = try Syscall.call("getrlimit") { getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) }
        return OpenFileLimit(soft: UInt64(limit.rlim_cur), hard: UInt64(limit.rlim_max))
    }

    /// Linux's default `fs.nr_open`: the soft limit cannot exceed it even when the hard limit is
    /// unlimited.
    static let kernelCeiling: rlim_t = 1 << 20

    /// Raises the soft limit to the hard limit (an unprivileged process may always do that,
    /// setrlimit(2)) and returns the limits in force afterwards.
    @discardableResult
    public static func raiseSoftToHard() throws(SystemError) -> OpenFileLimit {
        var limit = rlimit()
        _ = try Syscall.call("getrlimit") { getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) }
        let target = min(limit.rlim_max, kernelCeiling)
        if limit.rlim_cur < target {
            limit.rlim_cur = target
            _ = try Syscall.call("setrlimit") { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) }
        }
        return OpenFileLimit(soft: UInt64(limit.rlim_cur), hard: UInt64(limit.rlim_max))
    }
}

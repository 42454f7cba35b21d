import Glibc

/// What decides whether a large `MAP_NORESERVE` mapping costs memory or only address space:
/// the kernel's overcommit mode (proc(5), `/proc/sys/vm/overcommit_memory`) and the process's
/// `RLIMIT_AS`. Read once where a component chooses how to use such a mapping.
public struct AddressSpaceFacts: Sendable, Equatable {
    /// `vm.overcommit_memory`: 0 heuristic, 1 always, 2 strict (`MAP_NORESERVE` is ignored and
    /// every private writable mapping is charged against the commit limit); nil when unreadable.
    public var overcommitMode: Int?
    /// The soft `RLIMIT_AS` in bytes; nil when unlimited.
    public var addressSpaceLimit: UInt64?

    public init(overcommitMode: Int?, addressSpaceLimit: UInt64?) {
        self.overcommitMode = overcommitMode
        self.addressSpaceLimit = addressSpaceLimit
    }

    /// Where Linux publishes the overcommit mode.
    public static let overcommitModePath = "/proc/sys/vm/overcommit_memory"

    /// The host's facts now. `overcommitModePath` is the file the mode is read from; tests pass
    /// another file, so no global setting is needed to see how a strict host is handled.
    public static func current(overcommitModePath: String = overcommitModePath) -> AddressSpaceFacts {
        AddressSpaceFacts(
            overcommitMode: readOvercommitMode(overcommitModePath), addressSpaceLimit: currentAddressSpaceLimit())
    }

    /// The mode as the file states it (one decimal digit and a newline); nil when unreadable or
    /// anything else.
    static func readOvercommitMode(_ path: String) -> Int? {
        guard let bytes = try? FileContents.read(path, limit: 64) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        return Int(text.split(separator: "\n", omittingEmptySubsequences: false)[0])
    }

    private static func currentAddressSpaceLimit() -> UInt64? {
        var limit = rlimit()
        guard (try? Syscall.call("getrlimit", { getrlimit(Int32(RLIMIT_AS.rawValue), &limit) })) != nil,
            limit.rlim_cur != rlim_t.max
        else { return nil }
        return UInt64(limit.rlim_cur)
    }
}

/// An anonymous private read-write mapping made with `MAP_NORESERVE`: address space whose pages
/// cost memory only once written (unless the host charges the reservation, `AddressSpaceFacts`).
/// Unmapped in `deinit`.
public final class ReservedAddressSpace {
    public let start: UnsafeMutableRawPointer
    public let size: Int

    /// Throws when the host refuses the mapping (`ENOMEM`: the commit limit, `RLIMIT_AS`).
    public init(size: Int) throws(SystemError) {
        let address = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        guard let address, address != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw SystemError(function: "mmap", errorNumber: errno)
        }
        start = address
        self.size = size
    }

    deinit { munmap(start, size) }
}

import Glibc

/// An anonymous private mapping reserved with `MAP_NORESERVE`: its pages cost memory only once
/// written, so a buffer with a huge bound but usually small contents is cheap. Unmapped in `deinit`.
public final class ReservedMapping {
    public let start: UnsafeMutableRawPointer
    public let byteCount: Int

    /// Nil when the host refuses the mapping.
    public init?(byteCount: Int) {
        let address = mmap(
            nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        guard let address, address != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        start = address
        self.byteCount = byteCount
    }

    deinit { munmap(start, byteCount) }
}

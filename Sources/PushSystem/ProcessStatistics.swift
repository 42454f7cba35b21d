import Glibc

/// The process figures Prometheus' client conventions export as `process_*`, read from /proc
/// (proc(5)) at each call. Any figure the kernel does not provide reads as nil.
public struct ProcessStatistics: Sendable, Equatable {
    /// User plus system CPU time, in seconds (`/proc/self/stat` fields 14 and 15).
    public var cpuSeconds: Double?
    /// Resident set size in bytes (`/proc/self/stat` field 24 times the page size).
    public var residentMemoryBytes: Double?
    /// Open file descriptors (the entries of `/proc/self/fd`).
    public var openFileDescriptors: Double?
    /// The soft `RLIMIT_NOFILE`.
    public var maximumFileDescriptors: Double?
    /// When the process started, in Unix seconds (`/proc/self/stat` field 22 after boot, `btime` of
    /// `/proc/stat`).
    public var startTimeSeconds: Double?

    public static func current() -> ProcessStatistics {
        var statistics = ProcessStatistics()
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        if let fields = statFields(), fields.count > 21, ticksPerSecond > 0 {
            // Fields after the parenthesised command name start at field 3 (index 0 here).
            if let user = Double(fields[11]), let system = Double(fields[12]) {
                statistics.cpuSeconds = (user + system) / ticksPerSecond
            }
            if let pages = Double(fields[21]) {
                statistics.residentMemoryBytes = pages * Double(sysconf(Int32(_SC_PAGESIZE)))
            }
            if let startTicks = Double(fields[19]), let boot = bootTimeSeconds() {
                statistics.startTimeSeconds = boot + startTicks / ticksPerSecond
            }
        }
        statistics.openFileDescriptors = openDescriptorCount()
        if let limit = try? OpenFileLimit.current() { statistics.maximumFileDescriptors = Double(limit.soft) }
        return statistics
    }

    /// The fields of `/proc/self/stat` after the command name (which may itself hold spaces).
    private static func statFields() -> [Substring]? {
        guard let text = readSmallFile("/proc/self/stat"), let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    private static func bootTimeSeconds() -> Double? {
        guard let text = readSmallFile("/proc/stat") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingPrefix(" "))
        }
        return nil
    }

    private static func openDescriptorCount() -> Double? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        // `d_name` is declared 256 bytes but glibc's buffer holds only the entry's own name, so the
        // entry is never copied whole (`entry.pointee` would read past the buffer): only the name's
        // first byte is read, in place (docs/reliability.md, "C pointer lifetimes").
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(directory) {
            let isDot = UnsafeRawPointer(entry).load(fromByteOffset: nameOffset, as: UInt8.self) == UInt8(ascii: ".")
            if !isDot { count += 1 }
        }
        // The directory stream itself holds one descriptor while it is being read.
        return Double(max(0, count - 1))
    }

    private static func readSmallFile(_ path: String) -> String? {
        (try? FileContents.read(path)).map { String(decoding: $0, as: UTF8.self) }
    }
}

import Glibc

/// CPU time and memory of another process, from Linux's /proc (proc(5)).
struct ProcessStatistics {
    let pid: Int32

    /// utime + stime in seconds (fields 14 and 15 of /proc/PID/stat, in clock ticks).
    func cpuSeconds() throws -> Double {
        let fields = try Self.statFields(pid)
        return (fields[11] + fields[12]) / Self.ticksPerSecond
    }

    /// A server and everything it forked: its own utime + stime, its reaped children's (cutime +
    /// cstime, fields 16 and 17) and its live children's. For PostgreSQL's postmaster that is the
    /// whole cluster's CPU, backends included.
    func clusterCPUSeconds() throws -> Double {
        let own = try Self.statFields(pid)
        var ticks = own[11] + own[12] + own[13] + own[14]
        for entry in try Self.processIDs() where entry != pid {
            // A process that exited meanwhile is counted in cutime at the next reading.
            guard let fields = try? Self.statFields(entry), fields[1] == Double(pid) else { continue }
            ticks += fields[11] + fields[12]
        }
        return ticks / Self.ticksPerSecond
    }

    private static var ticksPerSecond: Double { Double(sysconf(Int32(_SC_CLK_TCK))) }

    /// The numeric fields of /proc/PID/stat from field 3 on (field 3, the state letter, reads as 0).
    private static func statFields(_ pid: Int32) throws -> [Double] {
        let stat = try read("/proc/\(pid)/stat")
        // The command name (field 2) is in parentheses and may contain spaces: count from after it.
        guard let close = stat.lastIndex(of: ")") else { throw BenchError("unreadable /proc/\(pid)/stat") }
        // fields[0] is field 3 (state): ppid (4) is fields[1], utime (14) fields[11], stime fields[12].
        let fields = stat[stat.index(after: close)...].split(separator: " ").map { Double($0) ?? 0 }
        guard fields.count > 14 else { throw BenchError("unreadable /proc/\(pid)/stat") }
        return fields
    }

    private static func processIDs() throws -> [Int32] {
        guard let directory = opendir("/proc") else { throw BenchError("cannot list /proc") }
        defer { closedir(directory) }
        var pids: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let pid = Int32(name) { pids.append(pid) }
        }
        return pids
    }

    /// A `VmRSS`/`VmHWM`-style line of /proc/PID/status, in MiB.
    func statusMebibytes(_ name: String) throws -> Double {
        for line in try Self.read("/proc/\(pid)/status").split(separator: "\n") where line.hasPrefix(name + ":") {
            let number = line.dropFirst(name.count + 1).filter(\.isNumber)
            if let kibibytes = Double(String(number)) { return kibibytes / 1024 }
        }
        throw BenchError("no \(name) in /proc/\(pid)/status")
    }

    private static func read(_ path: String) throws -> String {
        guard let file = fopen(path, "r") else { throw BenchError("cannot open \(path)") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

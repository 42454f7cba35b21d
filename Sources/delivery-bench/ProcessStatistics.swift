import Glibc

/// CPU time and memory of another process, from Linux's /proc (proc(5)).
struct ProcessStatistics {
    let pid: Int32

    /// utime + stime in seconds (fields 14 and 15 of /proc/PID/stat, in clock ticks).
    func cpuSeconds() throws -> Double {
        let stat = try Self.read("/proc/\(pid)/stat")
        // The command name (field 2) is in parentheses and may contain spaces: count from after it.
        guard let close = stat.lastIndex(of: ")") else { throw BenchError("unreadable /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state), so utime (14) and stime (15) are fields[11] and fields[12].
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw BenchError("unreadable /proc/\(pid)/stat")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
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

import Glibc

enum FuzzCheck {
    /// Aborts with `message` when `condition` is false: libFuzzer saves the input as a crash.
    static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        guard !condition else { return }
        printError("invariant violated: \(message())")
        abort()
    }

    static func printError(_ text: String) {
        let line = Array((text + "\n").utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}

enum FuzzInputs {
    /// `path` itself when it is a file, else the regular files directly inside it, sorted.
    static func files(at path: String) -> [String] {
        guard let directory = opendir(path) else { return [path] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if entry.pointee.d_type == UInt8(DT_REG) { names.append(path + "/" + name) }
        }
        return names.sorted()
    }

    static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            bytes += chunk[0..<count]
            if count < chunk.count { return ferror(file) == 0 ? bytes : nil }
        }
    }
}

/// A deterministic generator for targets whose randomness must repeat (a WebSocket handshake key
/// the target answers, signatures' auxiliary bytes): a Weyl sequence, not for real secrets.
struct CountingRandom: RandomNumberGenerator {
    var state: UInt64 = 0

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return state
    }
}

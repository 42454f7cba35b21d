import Glibc

/// Reads a small file whole with plain system calls: /proc files (whose size reads as 0) and
/// key files. Blocking: call it where blocking is fine.
public enum FileContents {
    /// The file's bytes; throws when it cannot be opened or read, or holds more than `limit` bytes.
    public static func read(_ path: String, limit: Int = 1 << 20) throws(SystemError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError(function: "open", code: errno) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw SystemError(function: "read", code: errno) }
            if count == 0 { return bytes }
            bytes += buffer[0..<count]
            guard bytes.count <= limit else { throw SystemError(function: "read", code: EFBIG) }
        }
    }
}

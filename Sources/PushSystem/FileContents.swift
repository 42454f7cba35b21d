import Glibc

/// Reads a small file whole with plain system calls: /proc files (whose size reads as 0), key files,
/// scripts and PEM files named on a command line. Blocking: call it where blocking is fine.
public enum FileContents {
    /// The file's bytes; throws when it cannot be opened or read, or holds more than `limit` bytes.
    public static func read(_ path: String, limit: Int = 1 << 20) throws(SystemError) -> [UInt8] {
        try readStamped(path, limit: limit).contents
    }

    /// The file's bytes and its modification time (Unix seconds), both from one open descriptor, so
    /// that the time belongs to the bytes even when the file is replaced meanwhile.
    public static func readStamped(
        _ path: String, limit: Int = 1 << 20
    ) throws(SystemError) -> (contents: [UInt8], modifiedAt: Int64) {
        let file = FileDescriptor(owning: try Syscall.call("open") { open(path, O_RDONLY | O_CLOEXEC) })
        var status = stat()
        _ = try Syscall.call("fstat") { fstat(file.rawValue, &status) }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let result = chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in try file.read(into: buffer) }
            }
            guard case .success(.value(let count)) = result else {
                if case .failure(let error) = result { throw error }
                throw SystemError(function: "read", errorNumber: EAGAIN)
            }
            if count == 0 { return (contents, Int64(status.st_mtim.tv_sec)) }
            contents.append(contentsOf: chunk[..<count])
            guard contents.count <= limit else { throw SystemError(function: "read", errorNumber: EFBIG) }
        }
    }
}

import Glibc

/// Whole small files (scripts, keys, PEM files named on a command line) read in one go.
public enum FileContents {
    /// The bytes of the file at `path`; nil when it cannot be opened or read.
    public static func read(path: String) -> [UInt8]? {
        guard let raw = try? Syscall.call("open", { open(path, O_RDONLY | O_CLOEXEC) }) else { return nil }
        let file = FileDescriptor(owning: raw)
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let result = chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in try file.read(into: buffer) }
            }
            guard case .success(.value(let count)) = result else { return nil }
            if count == 0 { return contents }
            contents.append(contentsOf: chunk[..<count])
        }
    }
}

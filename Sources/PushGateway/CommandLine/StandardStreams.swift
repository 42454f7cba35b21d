import Glibc

/// Whole-buffer writes to the standard streams (Glibc's `stdout`/`stderr` globals are shared mutable
/// state that Swift 6 refuses to touch, so this writes to the file descriptors directly).
enum StandardStreams {
    static func writeOutput(_ text: String) { writeAll(text, to: 1) }
    static func writeError(_ text: String) { writeAll(text, to: 2) }

    private static func writeAll(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }
}

import Glibc

/// Whole-buffer writes to standard output and standard error, for command output and log lines.
/// Glibc's `stdout`/`stderr` globals are shared mutable state that Swift 6 refuses to touch, so
/// this writes to descriptors 1 and 2 directly.
public enum StandardStreams {
    public static func writeOutput(_ text: String) { writeAll(text, to: 1) }
    public static func writeError(_ text: String) { writeAll(text, to: 2) }

    /// Writes every byte unless the descriptor fails (a closed pipe drops the rest: there is nowhere
    /// left to report to).
    private static func writeAll(_ text: String, to descriptor: Int32) {
        var text = text
        // The String's own UTF-8 storage: one log line per request is not copied into an array first.
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = try? Syscall.call("write") {
                    write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                }
                guard let written, written > 0 else { return }
                offset += written
            }
        }
    }
}

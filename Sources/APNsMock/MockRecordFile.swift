import Glibc
import PushSystem

/// A mock's `--record FILE` (docs/decisions/0740): opened for appending, one line per `append`.
/// Callers append under their own lock, so lines keep the order of the answers.
public final class MockRecordFile: Sendable {
    private let descriptor: FileDescriptor

    public init(path: String) throws(MockError) {
        let raw = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard raw >= 0 else { throw MockError(description: "cannot open the record file") }
        descriptor = FileDescriptor(owning: raw)
    }

    /// Writes `line` and a line feed.
    public func append(line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { try? descriptor.write($0) }
    }
}

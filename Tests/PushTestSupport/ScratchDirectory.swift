import Foundation

/// A temporary directory for the files a command under test reads; removed on deinit.
public final class ScratchDirectory {
    public let directory: URL

    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("scratch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Writes `bytes` to a new file and returns its path.
    public func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    public func file(_ name: String, text: String) throws -> String {
        try file(name, Array(text.utf8))
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

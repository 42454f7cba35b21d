import Glibc

/// A failed system call: the function that failed and its `errno`.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Name of the failing C function, e.g. `"bind"`.
    public let function: String
    /// The `errno` value the call left behind.
    public let code: Int32

    public init(function: String, code: Int32) {
        self.function = function
        self.code = code
    }

    /// The system's words for `code` (strerror), e.g. "No such file or directory".
    public var reason: String { String(cString: strerror(code)) }

    public var description: String {
        "\(function) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}

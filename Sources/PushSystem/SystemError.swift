import Glibc
public import PushErrors

/// PushSystem's one error (docs/decisions/0540): a failed system call, naming the function and its
/// `errno`, or a refused `host:port` address. Carries no part of an address: listen addresses are
/// configuration values, which never appear in messages.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public typealias Code = ErrorCode<SystemError>

    public let code: Code
    /// Name of the failing C function, e.g. `"bind"`; empty for an address refusal.
    public let function: String
    /// The `errno` value the call left behind; 0 for an address refusal.
    public let errorNumber: Int32

    /// A failed call (code `failedCall`).
    public init(function: String, errorNumber: Int32) {
        self.code = .failedCall
        self.function = function
        self.errorNumber = errorNumber
    }

    /// A refusal that is not a system call's (an address code).
    public init(_ code: Code) {
        self.code = code
        self.function = ""
        self.errorNumber = 0
    }

    /// The system's words for `errorNumber` (strerror), e.g. "No such file or directory".
    public var reason: String { String(cString: strerror(errorNumber)) }

    public var description: String {
        guard code == .failedCall else { return "invalid address (\(code))" }
        return "\(function) failed: \(reason) (errno \(errorNumber))"
    }
}

extension ErrorCode<SystemError> {
    /// A system call returned -1; `function` and `errorNumber` say which and why.
    public static var failedCall: Self { Self("failedCall") }

    /// An address without `:port`.
    public static var missingPort: Self { Self("missingPort") }

    /// A port that is not a number from 0 to 65535.
    public static var invalidPort: Self { Self("invalidPort") }

    /// A host that is neither a numeric IPv4/IPv6 address nor `localhost`.
    public static var invalidHost: Self { Self("invalidHost") }
}

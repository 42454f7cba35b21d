public import PushErrors

/// Why a configuration was refused: every problem found in one pass over the environment, so an
/// operator can fix them all at once. Each problem names the variable and what is wrong with it,
/// never the value (docs/protocol.md §12: "Configuration errors name the variable, never its value").
public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Why (docs/decisions/0540): new checks add a code without breaking a caller's `switch`, which
    /// ends in `default`.
    public typealias Code = ErrorCode<ConfigurationError>

    /// One variable and what is wrong with it.
    public struct Problem: Equatable, Sendable, CustomStringConvertible {
        public let variable: String
        public let problem: String

        public init(variable: String, problem: String) {
            self.variable = variable
            self.problem = problem
        }

        public var description: String { "\(variable): \(problem)" }
    }

    public let code: Code
    /// In the order they were found; never empty.
    public let problems: [Problem]

    public init(_ code: Code, problems: [Problem]) {
        self.code = code
        self.problems = problems
    }

    public init(_ code: Code, variable: String, problem: String) {
        self.init(code, problems: [Problem(variable: variable, problem: problem)])
    }

    /// One line per problem.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

extension ErrorCode<ConfigurationError> {
    /// Variables are missing, malformed or contradict each other.
    public static var invalidEnvironment: Self { Self("invalidEnvironment") }

    /// A keyring variable's text is not a list of valid, distinct `id:base64` keys.
    public static var invalidKeyring: Self { Self("invalidKeyring") }

    /// A secret variable's `_FILE` cannot be used, or both forms are set.
    public static var invalidSecretVariable: Self { Self("invalidSecretVariable") }
}

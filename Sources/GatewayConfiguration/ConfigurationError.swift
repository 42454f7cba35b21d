/// A configuration problem. It names the variable and what is wrong with it, never the value
/// (docs/protocol.md §12: "Configuration errors name the variable, never its value").
public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    public let variable: String
    public let problem: String

    public init(variable: String, problem: String) {
        self.variable = variable
        self.problem = problem
    }

    public var description: String { "\(variable): \(problem)" }
}

/// Every problem found in one pass over the environment, so an operator can fix them all at once.
public struct ConfigurationErrors: Error, Equatable, Sendable, CustomStringConvertible {
    public let errors: [ConfigurationError]

    public init(_ errors: [ConfigurationError]) {
        self.errors = errors
    }

    /// One line per error.
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}

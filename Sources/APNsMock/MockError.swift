/// Why a mock server could not start or read its script, in words for the test or operator.
public struct MockError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}

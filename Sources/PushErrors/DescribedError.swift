/// A module's one error when its code and one sentence for an operator say all there is
/// (docs/decisions/0540): the module declares `public typealias ItsError = DescribedError<ItsTag>`
/// with an empty tag enum of its own, and its codes in `extension ErrorCode<ItsError>`. The
/// sentence is fixed text or names configuration (a listener, a variable, a profile), never a
/// secret or request data.
public struct DescribedError<Tag>: Error, Equatable, Sendable, CustomStringConvertible {
    public typealias Code = ErrorCode<DescribedError<Tag>>

    public let code: Code
    public let description: String

    public init(_ code: Code, description: String) {
        self.code = code
        self.description = description
    }
}

/// A module's one error when its code says all there is (docs/decisions/0540): the module declares
/// `public typealias ItsError = CodedError<ItsTag>` with an empty tag enum of its own, so its errors
/// and codes are its own type, and its codes in `extension ErrorCode<ItsError>`.
public struct CodedError<Tag>: Error, Equatable, Sendable {
    public typealias Code = ErrorCode<CodedError<Tag>>

    public let code: Code

    public init(_ code: Code) {
        self.code = code
    }
}

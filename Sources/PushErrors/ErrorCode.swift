/// The extensible code of a module's one error struct (docs/decisions/0540): a name, compared by
/// value, tagged with the error type it belongs to so that codes of two modules never compare equal.
/// A module declares its codes as computed statics in an extension constrained to its error type
/// (a generic type cannot hold static stored properties); callers branch on them with `==` or a
/// `switch` that ends in `default`, so a new code breaks no caller.
public struct ErrorCode<Owner>: Hashable, Sendable, CustomStringConvertible {
    /// The code's stable name: what logs, metric labels and tests read.
    public let name: String

    public init(_ name: String) {
        self.name = name
    }

    public var description: String { name }
}

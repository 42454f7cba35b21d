public import PushErrors

/// The delivery core's one error (docs/decisions/0540). It never leaves the module: the ledger
/// throws it inside an admission transaction to roll that transaction back and answers with a
/// decision instead.
public struct DeliveryError: Error, Equatable, Sendable {
    /// Why (docs/decisions/0540): new codes break no caller's `switch`, which ends in `default`.
    public typealias Code = ErrorCode<DeliveryError>

    public let code: Code

    public init(_ code: Code) {
        self.code = code
    }
}

extension ErrorCode<DeliveryError> {
    /// The admission function admitted, but the 408 is due before the COMMIT could go out
    /// (docs/protocol.md §1: work not begun by the 408 never begins; the function's own check came
    /// one round trip earlier).
    public static var pastDeadlineBeforeCommit: Self { Self("pastDeadlineBeforeCommit") }
}

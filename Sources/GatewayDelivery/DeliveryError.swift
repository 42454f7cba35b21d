public import PushErrors

/// The delivery core's one error (docs/decisions/0540). It never leaves the module: the ledger
/// throws it inside an admission transaction to roll that transaction back and answers with a
/// decision instead.
public typealias DeliveryError = CodedError<DeliveryErrorTag>

/// Makes `DeliveryError` and its codes the delivery core's own.
public enum DeliveryErrorTag {}

extension ErrorCode<DeliveryError> {
    /// The admission function admitted, but the 408 is due before the COMMIT could go out
    /// (docs/protocol.md §1: work not begun by the 408 never begins; the function's own check came
    /// one round trip earlier).
    public static var pastDeadlineBeforeCommit: Self { Self("pastDeadlineBeforeCommit") }
}

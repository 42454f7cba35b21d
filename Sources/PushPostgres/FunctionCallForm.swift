import PushSystem

/// How `PostgresConnection.callFunction` sends a call (docs/decisions/0300, 0343).
public enum FunctionCallForm: Sendable, Equatable, CustomStringConvertible {
    /// The protocol's FunctionCall message; libpq writes the result into a buffer of 2 GiB of
    /// `MAP_NORESERVE` address space per connection (`FunctionResultBuffer`).
    case message
    /// One unnamed `SELECT name($1::type, …)` statement per call: parsed and planned each time, no
    /// buffer.
    case statement

    public var description: String {
        switch self {
        case .message: "function call message"
        case .statement: "statement"
        }
    }
}

/// The form for a host, and why: the message form only where its buffers cost address space and
/// nothing else. Under `vm.overcommit_memory = 2` Linux ignores `MAP_NORESERVE` and charges every
/// buffer in full against the commit limit (memory PostgreSQL on the same host would lose); under
/// an `RLIMIT_AS` the buffers count in full against the limit. Pure, so every case is unit-tested.
public struct FunctionCallFormChoice: Sendable, Equatable {
    public let form: FunctionCallForm
    /// Why, for the start-up log line: fixed phrases, no value but the mode.
    public let reason: String

    /// Address space left for everything else the process maps (thread stacks, allocator arenas,
    /// libraries) beside the buffers under an `RLIMIT_AS`.
    public static let headroomBytes: UInt64 = 4 << 30

    /// The form for `sessions` pooled connections, each of which maps one buffer.
    public static func choose(for facts: AddressSpaceFacts, sessions: Int) -> FunctionCallFormChoice {
        switch facts.overcommitMode {
        case 0, 1:
            break
        case 2:
            return FunctionCallFormChoice(
                form: .statement,
                reason: "vm.overcommit_memory is 2: the kernel would charge each 2 GiB result buffer in full")
        default:
            return FunctionCallFormChoice(
                form: .statement, reason: "vm.overcommit_memory is unreadable or unknown")
        }
        if let limit = facts.addressSpaceLimit {
            let (buffers, tooMany) = UInt64(max(1, sessions)).multipliedReportingOverflow(
                by: UInt64(FunctionResultBuffer.capacity))
            let (needed, overflow) = buffers.addingReportingOverflow(headroomBytes)
            if tooMany || overflow || limit < needed {
                return FunctionCallFormChoice(
                    form: .statement,
                    reason: "RLIMIT_AS leaves no room for a 2 GiB result buffer per session and 4 GiB besides")
            }
        }
        return FunctionCallFormChoice(
            form: .message, reason: "the result buffers cost address space only (overcommit mode 0 or 1)")
    }
}

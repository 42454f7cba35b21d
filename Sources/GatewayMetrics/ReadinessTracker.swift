import PushSystem
import Synchronization

/// The readiness last answered: logged once at each change and exported as
/// `push_gateway_readiness{state}` (docs/protocol.md §9).
public final class ReadinessTracker: Sendable {
    /// `ready` and the not-ready reasons of §9.
    public static let states = ["ready", "draining", "database", "schema", "privileges"]

    private let logger: Logger
    /// nil before the first probe.
    private let last = Mutex<String?>(nil)

    package init(logger: Logger) {
        self.logger = logger
    }

    /// The state of the last probe, nil before the first.
    public var state: String? { last.withLock { $0 } }

    /// Records one probe's answer; logs when it differs from the previous one.
    package func record(reason: String?, detail: String?) {
        let state = reason ?? "ready"
        let changed = last.withLock { last in
            defer { last = state }
            return last != state
        }
        guard changed else { return }
        if let reason {
            logger.warning("not ready", ["reason": .string(reason), "detail": .string(detail ?? reason)])
        } else {
            logger.info("ready")
        }
    }
}

import PushHTTP
import PushJSON
import PushPostgres
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

    init(logger: Logger) {
        self.logger = logger
    }

    /// The state of the last probe, nil before the first.
    public var state: String? { last.withLock { $0 } }

    /// Records one probe's answer; logs when it differs from the previous one.
    func record(reason: String?, detail: String?) {
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

/// The private listener's probes (docs/protocol.md §9).
struct HealthRoutes: Sendable {
    /// True once `serve` began draining: readiness fails from then on.
    let isDraining: @Sendable () -> Bool
    /// The database part of readiness: round trip, schema version, exactly-DML role.
    let databaseReadiness: @Sendable () -> DatabaseReadiness
    let tracker: ReadinessTracker

    func liveness(_ request: Request) -> Response {
        .json(status: 200, #"{"status":"alive"}"#)
    }

    func readiness(_ request: Request) -> Response {
        let reason: String?
        let detail: String?
        if isDraining() {
            (reason, detail) = ("draining", nil)
        } else if case .notReady(let why) = databaseReadiness() {
            (reason, detail) = (why.readinessClass, why.description)
        } else {
            (reason, detail) = (nil, nil)
        }
        tracker.record(reason: reason, detail: detail)
        guard let reason else { return .json(status: 200, #"{"status":"ready"}"#) }
        var body = JSONWriter(reservingCapacity: 48)
        body.beginObject()
        body.member("error", ErrorCode.notReady.rawValue)
        body.member("reason", reason)
        body.endObject()
        return .json(status: 503, body.bytes)
    }
}

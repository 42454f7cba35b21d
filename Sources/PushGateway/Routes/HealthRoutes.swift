import GatewayMetrics
import PushHTTP
import PushJSON
import PushPostgres
import PushSystem
import PushWire
import Synchronization

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
        body.member("error", GatewayErrorCode.notReady.rawValue)
        body.member("reason", reason)
        body.endObject()
        return .json(status: 503, body.bytes)
    }
}

import PushHTTP
import PushPostgres

/// The private listener's probes (PROTOCOL.md §9).
struct HealthRoutes: Sendable {
    /// True once `serve` began draining: readiness fails from then on.
    let isDraining: @Sendable () -> Bool
    /// The database part of readiness: round trip, schema version, exactly-DML role.
    let databaseReadiness: @Sendable () -> DatabaseReadiness

    func liveness(_ request: Request) -> Response {
        .json(status: 200, #"{"status":"alive"}"#)
    }

    func readiness(_ request: Request) -> Response {
        guard !isDraining(), databaseReadiness() == .ready else { return .error(503, .notReady) }
        return .json(status: 200, #"{"status":"ready"}"#)
    }
}

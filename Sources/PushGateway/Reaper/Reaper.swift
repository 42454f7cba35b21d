import GatewayConfiguration
import GatewayMetrics
import PushPostgres
import PushSystem
import Synchronization

/// How often and how much the reaper deletes.
public struct ReaperSettings: Sendable {
    /// Time between passes (`PUSH_GATEWAY_REAPER_INTERVAL_SECONDS`, default 60 s).
    public var interval: Duration
    /// Rows per DELETE statement: each batch is its own short transaction.
    public var batchSize: Int = 1000
    /// Batches per table and pass; the rest waits for the next pass, so one pass stays bounded.
    public var maximumBatchesPerTable: Int = 100
    /// Replay-protection rows (consumed challenges, NIP-98 event ids, request-id reservations) are
    /// kept this long past their `expires_at`, so a replica whose clock runs behind the database's
    /// still finds them while it would accept the challenge, event or request (decision 0092).
    public var replayRetentionSeconds: Int64 = 300
    /// The endpoint quota window length (`PUSH_GATEWAY_ENDPOINT_QUOTA_WINDOW_SECONDS`): a quota
    /// row is idle once its window has ended.
    public var quotaWindowSeconds: Int64

    public init(interval: Duration, quotaWindowSeconds: Int64) {
        self.interval = interval
        self.quotaWindowSeconds = quotaWindowSeconds
    }

    /// The settings `serve` uses.
    public init(configuration: GatewayConfiguration) {
        self.init(
            interval: .seconds(configuration.reaperIntervalSeconds),
            quotaWindowSeconds: configuration.endpointQuotaWindowSeconds)
    }
}

/// Housekeeping (docs/protocol.md §10): deletes expired rows in bounded batches, one replica at a time.
///
/// A pass leases one pooled connection and deletes batch by batch. Each batch is its own
/// transaction that first takes the transaction-level advisory lock `pushreap` with
/// `pg_try_advisory_xact_lock`, so the lock ends with the batch's COMMIT or ROLLBACK and nothing
/// stays behind on a server connection a transaction-mode pooler hands to someone else
/// (docs/protocol.md §10). Another replica holding it → the first batch skips the pass, a later one
/// ends it. A timer on a loop of the application's runtime starts each pass as a job on its workers
/// (docs/decisions/0875); the reaper has no thread of its own.
public final class Reaper: Sendable {
    /// Key of the advisory lock ("pushreap" in ASCII); distinct from `migrate`'s ("pushmigr").
    static let advisoryLockKey: Int64 = 0x7075_7368_7265_6170

    let pool: PostgresPool
    let settings: ReaperSettings
    let metrics: GatewayMetrics
    let logger: Logger
    private let stopRequested = Atomic<Bool>(false)
    private let share: RuntimeShare

    /// `runtime`: the application's, whose loop times the passes and whose workers run them.
    public init(pool: PostgresPool, settings: ReaperSettings, metrics: GatewayMetrics, logger: Logger, runtime: Runtime)
    {
        self.pool = pool
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        share = RuntimeShare(of: runtime)
    }

    /// One pass, on the calling thread (blocks on the database). Counts the pass and the deleted
    /// rows in the metrics and returns how it ended.
    @discardableResult
    public func runOnce() -> ReaperRunResult {
        let result: ReaperRunResult
        do {
            result = try pool.withConnection { connection in try deleteExpiredRows(connection) }
        } catch {
            logger.warning("reaper pass failed", ["error": .string("\(error)")])
            result = .failed
        }
        metrics.reaperRuns.increment(result)
        return result
    }

    /// Starts the passes: one every `settings.interval`, the first one interval after start, the
    /// next one interval after the last ended. Call once.
    public func start() {
        scheduleNextPass()
    }

    /// Asks the reaper to stop: no new pass starts, and a running pass stops after its current batch.
    public func beginStop() {
        stopRequested.store(true, ordering: .releasing)
    }

    /// Cancels the next pass and waits for a running one to finish (after `beginStop()`).
    public func waitUntilStopped() {
        share.stop()
    }

    private var isStopping: Bool { stopRequested.load(ordering: .acquiring) }

    private func scheduleNextPass() {
        share.timers.schedule(after: settings.interval) { [self] in
            // A pass blocks on the database: a worker runs it. A full worker queue skips this one.
            let queued = share.jobs.submit { [self] in
                guard !isStopping else { return }
                runOnce()
                scheduleNextPass()
            }
            if !queued && !isStopping {
                logger.warning("reaper pass skipped: the worker queue is full")
                scheduleNextPass()
            }
        }
    }

    /// The deletions of one pass in dependency order: delegations before installations (whose
    /// deletion cascades to any delegations left), independent tables first. Skipped when another
    /// replica holds the lock at the first batch.
    private func deleteExpiredRows(_ connection: PostgresConnection) throws -> ReaperRunResult {
        var firstBatch = true
        let grace = settings.replayRetentionSeconds
        let steps: [(ReaperTable, column: String, ageSeconds: Int64)] = [
            (.consumedChallenges, "expires_at", grace),
            (.nip98Replays, "expires_at", grace),
            (.deliveryReservations, "expires_at", grace),
            (.endpointQuotaWindows, "window_started_at", settings.quotaWindowSeconds),
            (.marmotTriggerDigests, "expires_at", 0),
            (.delegations, "expires_at", 0),
            (.installations, "expires_at", 0),
        ]
        for (table, column, ageSeconds) in steps {
            for _ in 0..<settings.maximumBatchesPerTable {
                if isStopping { return .ok }
                guard
                    let deleted = try lockedBatch(
                        connection, table: table.rawValue, column: column, ageSeconds: ageSeconds)
                else { return firstBatch ? .skipped : .ok }
                firstBatch = false
                metrics.reaperDeletedRows.increment(table, by: UInt64(deleted))
                if deleted < settings.batchSize { break }
            }
        }
        return .ok
    }

    /// One batch in its own transaction under the transaction-level advisory lock; nil when
    /// another replica holds it.
    private func lockedBatch(
        _ connection: PostgresConnection, table: String, column: String, ageSeconds: Int64
    ) throws -> Int? {
        try connection.withTransaction(isolation: .readCommitted) { transaction in
            let locked = try transaction.query(
                "SELECT pg_try_advisory_xact_lock($1)", [.int64(Self.advisoryLockKey)])
            guard try locked.bool(row: 0, column: 0) == true else { return nil }
            return try deleteBatch(transaction, table: table, column: column, ageSeconds: ageSeconds)
        }
    }

    /// Deletes at most `batchSize` rows whose `column` lies more than `ageSeconds` in the past.
    /// Rows another transaction has locked (an admission, a revocation) are skipped until the next
    /// pass rather than waited for; the outer predicate re-checks each row the DELETE reaches.
    private func deleteBatch(
        _ connection: PostgresConnection, table: String, column: String, ageSeconds: Int64
    ) throws(PostgresError) -> Int {
        let cutoff = "now() - make_interval(secs => $1::double precision)"
        let result = try connection.query(
            """
            DELETE FROM \(table) WHERE ctid IN (
                SELECT ctid FROM \(table) WHERE \(column) < \(cutoff) LIMIT $2 FOR UPDATE SKIP LOCKED
            ) AND \(column) < \(cutoff)
            """, [.int64(ageSeconds), .int64(Int64(settings.batchSize))])
        return result.affectedRowCount
    }
}

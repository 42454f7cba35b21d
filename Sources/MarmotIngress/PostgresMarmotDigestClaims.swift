import PushPostgres

/// docs/protocol.md §13 step 4 on PostgreSQL: the table `marmot_trigger_digests` (migration 0008),
/// one row per trigger content for 10 minutes; the reaper deletes it after (§10).
public final class PostgresMarmotDigestClaims: MarmotDigestClaims {
    /// How long a digest refuses a copy of its trigger.
    public static let retentionSeconds: Int64 = 600

    private let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// In a transaction of its own: `serve`'s pool refuses statements outside one (its search path
    /// is pinned per transaction).
    public func claim(_ digest: [UInt8]) throws -> Bool {
        try pool.withConnection { connection in
            try connection.withTransaction(isolation: .readCommitted) { transaction in
                try transaction.query(
                    """
                    INSERT INTO marmot_trigger_digests (digest, expires_at)
                    VALUES ($1, now() + make_interval(secs => $2::double precision))
                    ON CONFLICT DO NOTHING
                    """, [.bytes(digest), .int64(Self.retentionSeconds)]
                ).affectedRowCount == 1
            }
        }
    }
}

import GatewayCredentials
import PushPostgres
import PushSystem

/// The statements of the lifecycle flows (docs/protocol.md §4.1–§4.6), run inside one unit of work
/// of a ``LifecycleDatabase`` (docs/decisions/0850). Times are the flow's Unix seconds, so one clock
/// decides every expiry; row locks are taken installation first, then delegation (§4.7). A unique
/// conflict is thrown as the `PostgresError` PostgreSQL would raise (SQLSTATE 23505), which the
/// flows answer as an authority failure.
package protocol LifecycleStore {
    /// Inserts the challenge id; a reuse throws the unique violation.
    func consumeChallenge(_ challengeID: CanonicalUUID, expiresAt: Int64) throws
    /// The installation named `handle`, read without a lock.
    func installation(_ handle: CanonicalUUID) throws -> InstallationRecord?
    /// The installation named `handle`, locked until the unit of work ends.
    func lockInstallation(_ handle: CanonicalUUID) throws -> InstallationRecord?
    /// Stores an iOS installation's `counter`; false when the stored counter is not lower.
    func advanceCounter(_ handle: CanonicalUUID, to counter: UInt32) throws -> Bool
    /// Deletes the expired installations that hold `keyID` or (`profile`, `fingerprint`), then
    /// locks and returns the live ones that do.
    func lockLiveConflicts(
        keyID: [UInt8], profile: String, fingerprint: [UInt8], now: Int64
    ) throws
        -> [InstallationRecord]
    /// Inserts `installation`; an unrevoked row holding its key id or its (profile, fingerprint)
    /// throws the unique violation of its `installations_live_` index.
    func insertInstallation(_ installation: NewInstallation) throws
    /// The generation stored for (installation, relay), locked; nil when there is none.
    func lockDelegationGeneration(installation: CanonicalUUID, relay: [UInt8]) throws -> Int64?
    /// Writes `grant`'s delegation over any lower generation; false when one at least as high exists.
    func upsertDelegation(_ grant: EndpointGrant, installation: CanonicalUUID, notBefore: Int64) throws -> Bool
    /// Marks the (installation, relay) delegation revoked, keeping a first revocation time.
    func revokeDelegation(installation: CanonicalUUID, relay: [UInt8], now: Int64) throws
    /// Deletes expired holders of (`profile`, `fingerprint`); true when another live installation
    /// than `handle` holds it.
    func endpointHeldByAnother(
        profile: String, fingerprint: [UInt8], handle: CanonicalUUID, now: Int64
    ) throws
        -> Bool
    /// Replaces the sealed endpoint, its fingerprint and the epoch.
    func rotateEndpoint(_ handle: CanonicalUUID, encryptedEndpoint: String, fingerprint: [UInt8], epoch: Int64) throws
    /// Marks the installation revoked at `now` with `epoch` and revokes all its delegations.
    func revokeInstallation(_ handle: CanonicalUUID, epoch: Int64, now: Int64) throws
}

/// Where the lifecycle flows keep installations (docs/decisions/0850): sessions of units of work
/// over a ``LifecycleStore``. `PostgresLifecycleDatabase` is the gateway's; the tests keep one in memory.
package protocol LifecycleDatabase: Sendable {
    /// Runs `body` in one session (for PostgreSQL one leased connection), so an assertion route's
    /// unlocked read and its transaction use the same connection.
    func withSession<Value>(_ body: (any LifecycleSession) throws -> Value) throws -> Value
}

/// One session of a ``LifecycleDatabase``: its units of work run one after the other.
package protocol LifecycleSession {
    /// `body` as one read-only unit of work (bounded by the statement timeout, docs/decisions/0341).
    func read<Value>(_ body: (any LifecycleStore) throws -> Value) throws -> Value
    /// `body` as one READ COMMITTED transaction that neither begins nor commits past `deadline`
    /// (docs/protocol.md §1); when `body` throws, nothing it wrote remains.
    func transaction<Value>(
        before deadline: MonotonicInstant, _ body: (any LifecycleStore) throws -> Value
    ) throws
        -> Value
}

extension InstallationStore: LifecycleStore {}

/// The gateway's ``LifecycleDatabase``: connections of the pool, each unit of work one PostgreSQL
/// transaction of ``InstallationStore``'s statements.
package struct PostgresLifecycleDatabase: LifecycleDatabase {
    let pool: PostgresPool

    package init(pool: PostgresPool) {
        self.pool = pool
    }

    package func withSession<Value>(_ body: (any LifecycleSession) throws -> Value) throws -> Value {
        try pool.withConnection { connection in try body(Session(connection: connection)) }
    }

    struct Session: LifecycleSession {
        let connection: PostgresConnection

        func read<Value>(_ body: (any LifecycleStore) throws -> Value) throws -> Value {
            try connection.withTransaction(isolation: .readCommitted, readOnly: true) { connection in
                try body(InstallationStore(connection: connection))
            }
        }

        func transaction<Value>(
            before deadline: MonotonicInstant, _ body: (any LifecycleStore) throws -> Value
        ) throws -> Value {
            // The database checks the deadline by its own clock at BEGIN and before COMMIT.
            try connection.withTransaction(
                isolation: .readCommitted, deadlineUnixMilliseconds: SystemWallClock.unixMilliseconds(at: deadline)
            ) { connection in try body(InstallationStore(connection: connection)) }
        }
    }
}

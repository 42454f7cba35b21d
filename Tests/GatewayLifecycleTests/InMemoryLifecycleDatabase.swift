import GatewayConfiguration
import GatewayCredentials
import PushCrypto
import PushPostgres
import PushSystem
import Synchronization

@testable import GatewayLifecycle

/// A ``LifecycleDatabase`` in memory with the semantics of `InstallationStore`'s statements and the
/// schema's live-uniqueness indexes (docs/decisions/0030, 0850). A transaction works on a copy of
/// the tables and commits it only when its body returns, so a throw leaves nothing behind.
final class InMemoryLifecycleDatabase: LifecycleDatabase {
    /// One `installations` row.
    struct Installation: Equatable {
        let handle: CanonicalUUID
        let platform: AppProfile.Platform
        let provider: String
        var keyID: [UInt8]
        let publicKey: P256PublicKey
        var proofCounter: UInt32?
        let appProfile: String
        var encryptedEndpoint: String
        var endpointFingerprint: [UInt8]
        var endpointEpoch: Int64
        var revokedAt: Int64?
        let expiresAt: Int64

        var record: InstallationRecord {
            InstallationRecord(
                handle: handle, platform: platform, provider: provider, keyID: keyID, publicKey: publicKey,
                proofCounter: proofCounter, appProfile: appProfile, endpointFingerprint: endpointFingerprint,
                endpointEpoch: endpointEpoch, isRevoked: revokedAt != nil, expiresAt: expiresAt)
        }

        func isLive(at now: Int64) -> Bool { revokedAt == nil && now < expiresAt }
    }

    struct DelegationKey: Hashable {
        let installation: CanonicalUUID
        let relay: [UInt8]
    }

    /// One `delegations` row.
    struct Delegation: Equatable {
        let delegationID: CanonicalUUID
        let generation: Int64
        let endpointEpoch: Int64
        let notBefore: Int64
        let expiresAt: Int64
        var revokedAt: Int64?
    }

    struct Tables: Equatable {
        var installations: [CanonicalUUID: Installation] = [:]
        var delegations: [DelegationKey: Delegation] = [:]
        /// Challenge id → `expires_at`.
        var consumedChallenges: [CanonicalUUID: Int64] = [:]
    }

    /// The statements a test can make fail.
    enum Statement: Hashable {
        case consumeChallenge, lockInstallation, advanceCounter, insertInstallation, upsertDelegation
        case revokeDelegation, rotateEndpoint, revokeInstallation
    }

    private let committed = Mutex(Tables())
    private let failures = Mutex<[Statement: PostgresError]>([:])
    private let concurrentCommit = Mutex<(@Sendable (inout Tables) -> Void)?>(nil)
    private let counts = Mutex((committed: 0, rolledBack: 0))

    /// The committed tables.
    var tables: Tables { committed.withLock { $0 } }
    var committedTransactions: Int { counts.withLock { $0.committed } }
    var rolledBackTransactions: Int { counts.withLock { $0.rolledBack } }

    /// Writes rows as a committed transaction before the test's requests.
    func seed(_ change: (inout Tables) -> Void) {
        committed.withLock { change(&$0) }
    }

    /// The next execution of `statement` throws `error`.
    func fail(_ statement: Statement, with error: PostgresError) {
        failures.withLock { $0[statement] = error }
    }

    /// The next row lock waits for another request's transaction, which commits `change` first.
    func commitConcurrently(beforeNextLock change: @escaping @Sendable (inout Tables) -> Void) {
        concurrentCommit.withLock { $0 = change }
    }

    func withSession<Value>(_ body: (any LifecycleSession) throws -> Value) throws -> Value {
        try body(Session(database: self))
    }

    struct Session: LifecycleSession {
        let database: InMemoryLifecycleDatabase

        func read<Value>(_ body: (any LifecycleStore) throws -> Value) throws -> Value {
            try body(Transaction(database: database, tables: database.tables, readOnly: true))
        }

        func transaction<Value>(
            before deadline: MonotonicInstant, _ body: (any LifecycleStore) throws -> Value
        ) throws -> Value {
            let transaction = Transaction(database: database, tables: database.tables, readOnly: false)
            do {
                let value = try body(transaction)
                // The database's own deadline check before COMMIT (docs/protocol.md §1).
                guard MonotonicInstant.now() < deadline else {
                    throw PostgresError(code: .server, sqlState: "PGW08", message: "past the request deadline")
                }
                database.committed.withLock { $0 = transaction.tables }
                database.counts.withLock { $0.committed += 1 }
                return value
            } catch {
                database.counts.withLock { $0.rolledBack += 1 }
                throw error
            }
        }
    }

    /// One unit of work: the statements over its own copy of the tables.
    final class Transaction: LifecycleStore {
        let database: InMemoryLifecycleDatabase
        var tables: Tables
        let readOnly: Bool

        init(database: InMemoryLifecycleDatabase, tables: Tables, readOnly: Bool) {
            self.database = database
            self.tables = tables
            self.readOnly = readOnly
        }

        private func execute(_ statement: Statement) throws {
            precondition(!readOnly, "a write in a read-only transaction")
            if let failure = database.failures.withLock({ $0.removeValue(forKey: statement) }) { throw failure }
        }

        private static func uniqueViolation(_ constraint: String) -> PostgresError {
            PostgresError(code: .server, sqlState: "23505", message: "duplicate key", constraintName: constraint)
        }

        func consumeChallenge(_ challengeID: CanonicalUUID, expiresAt: Int64) throws {
            try execute(.consumeChallenge)
            guard tables.consumedChallenges[challengeID] == nil else {
                throw Self.uniqueViolation("consumed_challenges_pkey")
            }
            tables.consumedChallenges[challengeID] = expiresAt
        }

        func installation(_ handle: CanonicalUUID) throws -> InstallationRecord? {
            tables.installations[handle]?.record
        }

        func lockInstallation(_ handle: CanonicalUUID) throws -> InstallationRecord? {
            try execute(.lockInstallation)
            if let change = database.concurrentCommit.withLock({ hook in
                defer { hook = nil }; return hook
            }) {
                database.committed.withLock { change(&$0) }
                change(&tables)
            }
            return tables.installations[handle]?.record
        }

        func advanceCounter(_ handle: CanonicalUUID, to counter: UInt32) throws -> Bool {
            try execute(.advanceCounter)
            guard let row = tables.installations[handle], row.platform == .ios, let stored = row.proofCounter,
                stored < counter
            else { return false }
            tables.installations[handle]?.proofCounter = counter
            return true
        }

        func lockLiveConflicts(
            keyID: [UInt8], profile: String, fingerprint: [UInt8], now: Int64
        ) throws -> [InstallationRecord] {
            let holds = { (row: Installation) in
                row.keyID == keyID || (row.appProfile == profile && row.endpointFingerprint == fingerprint)
            }
            for row in tables.installations.values where row.expiresAt <= now && holds(row) { delete(row.handle) }
            return tables.installations.values.filter { $0.isLive(at: now) && holds($0) }.map(\.record)
        }

        func insertInstallation(_ installation: NewInstallation) throws {
            try execute(.insertInstallation)
            // The partial unique indexes of migration 0001: unrevoked rows, whatever their expiry.
            let unrevoked = tables.installations.values.filter { $0.revokedAt == nil }
            if unrevoked.contains(where: { $0.keyID == installation.key.keyID }) {
                throw Self.uniqueViolation("installations_live_key_id")
            }
            if unrevoked.contains(where: {
                $0.appProfile == installation.appProfile && $0.endpointFingerprint == installation.endpointFingerprint
            }) {
                throw Self.uniqueViolation("installations_live_endpoint")
            }
            // A missing provider is the platform's default, as migration 0009's trigger fills it.
            tables.installations[installation.handle] = Installation(
                handle: installation.handle, platform: installation.platform,
                provider: installation.provider ?? (installation.platform == .ios ? "apns" : "fcm"),
                keyID: installation.key.keyID, publicKey: installation.key.publicKey,
                proofCounter: installation.platform == .ios ? 0 : nil, appProfile: installation.appProfile,
                encryptedEndpoint: installation.encryptedEndpoint,
                endpointFingerprint: installation.endpointFingerprint,
                endpointEpoch: 1, revokedAt: nil, expiresAt: installation.expiresAt)
        }

        func lockDelegationGeneration(installation: CanonicalUUID, relay: [UInt8]) throws -> Int64? {
            tables.delegations[DelegationKey(installation: installation, relay: relay)]?.generation
        }

        func upsertDelegation(_ grant: EndpointGrant, installation: CanonicalUUID, notBefore: Int64) throws -> Bool {
            try execute(.upsertDelegation)
            let key = DelegationKey(installation: installation, relay: grant.relayPublicKey)
            if let existing = tables.delegations[key], existing.generation >= grant.generation { return false }
            tables.delegations[key] = Delegation(
                delegationID: grant.delegationID, generation: grant.generation, endpointEpoch: grant.endpointEpoch,
                notBefore: notBefore, expiresAt: grant.expiresAt, revokedAt: nil)
            return true
        }

        func revokeDelegation(installation: CanonicalUUID, relay: [UInt8], now: Int64) throws {
            try execute(.revokeDelegation)
            let key = DelegationKey(installation: installation, relay: relay)
            if tables.delegations[key]?.revokedAt == nil { tables.delegations[key]?.revokedAt = now }
        }

        func endpointHeldByAnother(
            profile: String, fingerprint: [UInt8], handle: CanonicalUUID, now: Int64
        ) throws -> Bool {
            let holds = { (row: Installation) in row.appProfile == profile && row.endpointFingerprint == fingerprint }
            for row in tables.installations.values where row.expiresAt <= now && holds(row) { delete(row.handle) }
            return tables.installations.values.contains { holds($0) && $0.isLive(at: now) && $0.handle != handle }
        }

        func rotateEndpoint(
            _ handle: CanonicalUUID, encryptedEndpoint: String, fingerprint: [UInt8], epoch: Int64
        ) throws {
            try execute(.rotateEndpoint)
            tables.installations[handle]?.encryptedEndpoint = encryptedEndpoint
            tables.installations[handle]?.endpointFingerprint = fingerprint
            tables.installations[handle]?.endpointEpoch = epoch
        }

        func revokeInstallation(_ handle: CanonicalUUID, epoch: Int64, now: Int64) throws {
            try execute(.revokeInstallation)
            tables.installations[handle]?.revokedAt = now
            tables.installations[handle]?.endpointEpoch = epoch
            for key in tables.delegations.keys
            where key.installation == handle && tables.delegations[key]?.revokedAt == nil {
                tables.delegations[key]?.revokedAt = now
            }
        }

        /// Deletes an installation; its delegations cascade.
        private func delete(_ handle: CanonicalUUID) {
            tables.installations[handle] = nil
            tables.delegations = tables.delegations.filter { $0.key.installation != handle }
        }
    }
}

import Foundation
import PushAttest
import PushCrypto
import PushHTTP
import PushNostr
import PushPostgres
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayConfiguration
@testable import GatewayCredentials
@testable import PushGateway

/// A wall clock the test sets and advances (e.g. past a challenge's 300 s).
final class LifecycleTestClock: WallClock {
    private let milliseconds: Atomic<Int64>

    init(unixMilliseconds: Int64 = SystemWallClock().unixMilliseconds()) {
        milliseconds = Atomic(unixMilliseconds)
    }

    func unixMilliseconds() -> Int64 { milliseconds.load(ordering: .acquiring) }

    func advance(seconds: Int64) { milliseconds.add(seconds * 1000, ordering: .acquiringAndReleasing) }
}

/// A `TestGateway` on a migrated database that accepts a synthetic App Attest CA as the explicit
/// untrusted root and uses `clock`.
final class LifecycleGateway {
    static let origin = "https://push.buzz.xyz"
    static let profile = "buzz-ios-production"
    static let appID = "ABCDE12345.xyz.buzz.app"

    let gateway: TestGateway
    let database: TemporaryDatabase
    /// The pooler `serve`'s sessions go through: the one `throughPgBouncer` started, or scripts/test's
    /// pgbouncer pass's.
    let pooler: PgBouncer?
    let authority: SyntheticAppAttestAuthority
    let clock: LifecycleTestClock
    private let admin: PostgresConnection

    var server: GatewayServer { gateway.server }
    var configuration: GatewayConfiguration { gateway.configuration }

    /// `databaseURL` replaces the runtime role's URL (e.g. an unreachable server); `throughPgBouncer`
    /// puts a pgbouncer of its own in front of the database (`pooler`, to PAUSE and RESUME);
    /// `providers` builds the push providers from the final configuration (default: none, every
    /// delivery a configuration fault); `logger` receives the gateway's log lines (default: errors to standard error);
    /// `tuning` changes the public listener's limits and timeouts.
    init(
        clock: LifecycleTestClock = LifecycleTestClock(), databaseURL: String? = nil, throughPgBouncer: Bool = false,
        providers: ProviderFactory = .none, logger: Logger = TestLogs.logger(),
        _ adjust: (ConfigurationTestEnvironment) -> ConfigurationTestEnvironment = { $0 },
        tuning: (inout HTTPServerConfiguration) -> Void = { _ in }
    ) throws {
        let migrated = try MigratedTestDatabase()
        let ownPooler = throughPgBouncer ? try PgBouncer(fronting: migrated.database.url(for: migrated.role)) : nil
        let authority = try SyntheticAppAttestAuthority()
        gateway = try TestGateway(database: .migrated(migrated), providers: providers, clock: clock, logger: logger) {
            var environment = try $0.trusting(authority)
                // Tests ask for many challenges and make many lifecycle requests from one address.
                .with("PUSH_GATEWAY_CHALLENGE_RATE_PER_MINUTE", "600000")
                .with("PUSH_GATEWAY_LIFECYCLE_RATE_PER_MINUTE", "600000")
            if let databaseURL = databaseURL ?? ownPooler?.url {
                environment = environment.with("DATABASE_URL", databaseURL)
            }
            return adjust(environment)
        } tuning: {
            tuning(&$0)
        }
        database = migrated.database
        pooler = ownPooler ?? migrated.pooler
        admin = try database.connect()
        self.authority = authority
        self.clock = clock
    }

    /// A new device of the configured app.
    func makeDevice() throws -> LifecycleDevice {
        LifecycleDevice(device: try authority.makeDevice(appID: Self.appID))
    }

    func post(_ path: String, _ body: String, contentType: String = "application/json") throws -> HTTPTestResponse {
        try gateway.post(path, body, contentType: contentType)
    }

    /// Opens the `endpoint_grant` of a delegation response with the configured grant keyring.
    func grant(_ response: HTTPTestResponse) throws -> EndpointGrant {
        let text = try #require(try lifecycleObject(response)["endpoint_grant"] as? String)
        return try #require(
            EndpointGrant.open(
                text, with: SealedEnvelope(purpose: .endpointGrant, keyring: Keyring(configuration.grantKeys))))
    }

    /// A challenge from `POST /v1/installations/challenges`.
    func challenge() throws -> LifecycleChallenge {
        let response = try post("/v1/installations/challenges", #"{"v":1}"#)
        guard response.status == 200,
            let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
            let id = object["challenge_id"] as? String, let challenge = object["challenge"] as? String
        else { throw TestSupportError("no challenge") }
        return LifecycleChallenge(id: id, challenge: challenge)
    }

    /// Superuser queries to inspect the database state.
    func query(_ sql: String, _ parameters: [PostgresParameter] = []) throws -> PostgresResult {
        try admin.query(sql, parameters)
    }

    /// Row counts of every gateway table, to show that a rejected request wrote nothing.
    func rowCounts() throws -> [String: Int64] {
        var counts: [String: Int64] = [:]
        for table in [
            "consumed_challenges", "installations", "delegations", "nip98_replays", "delivery_reservations",
            "endpoint_quota_windows",
        ] {
            counts[table] = try query("SELECT count(*) FROM \(table)").int64(row: 0, column: 0)
        }
        return counts
    }

    /// The whole `installations` table as text (every column, every row), to search for secrets.
    func installationsText() throws -> String {
        let result = try query("SELECT i::text FROM installations i")
        return try (0..<result.rowCount).compactMap { try result.string(row: $0, column: 0) }.joined(separator: "\n")
    }

    /// Enrolls `device` with a fresh challenge; returns the handle.
    @discardableResult
    func enroll(_ device: LifecycleDevice, endpoint: String? = nil, expiresIn: Int64 = 86_400) throws -> String {
        let body = try device.enrollBody(
            challenge: try challenge(), endpoint: endpoint ?? device.endpoint,
            expiresAt: clock.unixSeconds() + expiresIn)
        let response = try post("/v1/installations", body)
        guard response.status == 201,
            let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
            let handle = object["installation_handle"] as? String
        else { throw TestSupportError("enrollment answered \(response.status)") }
        device.handle = handle
        return handle
    }

    /// Delegates `device` to `relay` with a fresh challenge; returns the response.
    func delegate(
        _ device: LifecycleDevice, relay: String, generation: Int64, expiresIn: Int64 = 3600, epoch: Int64? = nil
    ) throws -> HTTPTestResponse {
        let now = clock.unixSeconds()
        return try post(
            "/v1/delegations",
            try device.delegateBody(
                challenge: try challenge(), epoch: epoch ?? device.epoch, generation: generation, relay: relay,
                notBefore: now, expiresAt: now + expiresIn))
    }
}

/// Holds every challenge consumption (the first statement of every lifecycle transaction) so that
/// concurrent requests gather there and then run their transactions together.
final class LifecycleConsumptionGate {
    private let holder: PostgresConnection

    init(_ gateway: LifecycleGateway) throws {
        holder = try gateway.database.connect()
        try holder.query("BEGIN")
        try holder.query("LOCK TABLE consumed_challenges IN EXCLUSIVE MODE")
    }

    /// Opens the gate once `count` requests wait at it, or after 1.5 s (below the 2 s lock timeout).
    func open(whenWaiting count: Int) {
        _ = eventually(within: 1.5) {
            let waiting = try? holder.query(
                "SELECT count(*) FROM pg_locks WHERE relation = 'consumed_challenges'::regclass AND NOT granted")
            return (try? waiting?.int64(row: 0, column: 0)).flatMap { $0 }.map { $0 >= count } ?? false
        }
        _ = try? holder.query("COMMIT")
    }
}

/// A challenge as the app received it.
struct LifecycleChallenge: Sendable {
    let id: String
    let challenge: String
}

/// The app side of one synthetic device: builds exactly the bodies and transcripts an app would
/// send, counting its assertions as App Attest does.
final class LifecycleDevice {
    let device: SyntheticAppAttestDevice
    let endpoint: String
    var handle: String?
    var epoch: Int64 = 1
    var counter: UInt32 = 0

    init(device: SyntheticAppAttestDevice) {
        self.device = device
        // 32 random bytes as lowercase hex, as APNs device tokens look.
        endpoint = Hex.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
    }

    /// The next assertion counter (or `counter` when given, to replay one).
    private func nextCounter(_ counter: UInt32?) -> UInt32 {
        if let counter { return counter }
        self.counter += 1
        return self.counter
    }

    func enrollBody(
        challenge: LifecycleChallenge, endpoint: String, expiresAt: Int64, profile: String = LifecycleGateway.profile,
        origin: String = LifecycleGateway.origin
    ) throws -> String {
        let transcript = AppAttestTranscript.enroll(
            origin: origin, challengeID: challenge.id, challenge: challenge.challenge, keyID: device.keyIDBase64,
            appProfile: profile, endpoint: endpoint, endpointEpoch: 1, expiresAt: expiresAt)
        let attestation = try device.attestationObject(clientDataHash: transcript.clientDataHash)
        return """
            {"v":1,"challenge_id":"\(challenge.id)","challenge":"\(challenge.challenge)",\
            "key_id":"\(device.keyIDBase64)","attestation":"\(Base64.encode(attestation))",\
            "app_profile":"\(profile)","endpoint":"\(endpoint)","endpoint_epoch":1,"expires_at":\(expiresAt)}
            """
    }

    func assertion(_ transcript: AppAttestTranscript, counter: UInt32? = nil) throws -> String {
        Base64.encode(try device.assertion(clientDataHash: transcript.clientDataHash, counter: nextCounter(counter)))
    }

    func delegateBody(
        challenge: LifecycleChallenge, epoch: Int64, generation: Int64, relay: String, notBefore: Int64,
        expiresAt: Int64, counter: UInt32? = nil, handle: String? = nil
    ) throws -> String {
        try AssertedBodies.delegate(
            challenge: challenge, handle: handle ?? self.handle ?? "", epoch: epoch, generation: generation,
            relay: relay, notBefore: notBefore, expiresAt: expiresAt
        ) { try assertion($0, counter: counter) }
    }

    func rotateBody(
        challenge: LifecycleChallenge, epoch: Int64, endpoint: String, counter: UInt32? = nil
    ) throws -> String {
        try AssertedBodies.rotate(challenge: challenge, handle: handle ?? "", epoch: epoch, endpoint: endpoint) {
            try assertion($0, counter: counter)
        }
    }

    func revokeDelegationBody(
        challenge: LifecycleChallenge, relay: String, generation: Int64, counter: UInt32? = nil
    ) throws -> String {
        try AssertedBodies.revokeDelegation(
            challenge: challenge, handle: handle ?? "", relay: relay, generation: generation
        ) { try assertion($0, counter: counter) }
    }

    func revokeInstallationBody(challenge: LifecycleChallenge, epoch: Int64, counter: UInt32? = nil) throws -> String {
        try AssertedBodies.revokeInstallation(challenge: challenge, handle: handle ?? "", epoch: epoch) {
            try assertion($0, counter: counter)
        }
    }
}

/// The bodies of the four assertion routes (docs/protocol.md §4.3–§4.6) for either platform's test
/// device: `proof` is the device's proof over the route's transcript (an App Attest assertion or
/// the Keystore key's signature, §3).
enum AssertedBodies {
    typealias Proof = (AppAttestTranscript) throws -> String

    static func delegate(
        challenge: LifecycleChallenge, handle: String, epoch: Int64, generation: Int64, relay: String,
        notBefore: Int64, expiresAt: Int64, proof: Proof
    ) throws -> String {
        let transcript = AppAttestTranscript.delegate(
            origin: LifecycleGateway.origin, challengeID: challenge.id, challenge: challenge.challenge,
            installationHandle: handle, endpointEpoch: epoch, generation: generation, relayPubkey: relay,
            notBefore: notBefore, expiresAt: expiresAt)
        return """
            {"v":1,"challenge_id":"\(challenge.id)","challenge":"\(challenge.challenge)",\
            "installation_handle":"\(handle)","endpoint_epoch":\(epoch),"generation":\(generation),\
            "relay_pubkey":"\(relay)","not_before":\(notBefore),"expires_at":\(expiresAt),\
            "assertion":"\(try proof(transcript))"}
            """
    }

    static func rotate(
        challenge: LifecycleChallenge, handle: String, epoch: Int64, endpoint: String, proof: Proof
    ) throws -> String {
        let transcript = AppAttestTranscript.rotateEndpoint(
            origin: LifecycleGateway.origin, challengeID: challenge.id, challenge: challenge.challenge,
            installationHandle: handle, endpointEpoch: epoch, newEndpointEpoch: epoch + 1, endpoint: endpoint)
        return """
            {"v":1,"challenge_id":"\(challenge.id)","challenge":"\(challenge.challenge)",\
            "installation_handle":"\(handle)","endpoint_epoch":\(epoch),"new_endpoint_epoch":\(epoch + 1),\
            "endpoint":"\(endpoint)","assertion":"\(try proof(transcript))"}
            """
    }

    static func revokeDelegation(
        challenge: LifecycleChallenge, handle: String, relay: String, generation: Int64, proof: Proof
    ) throws -> String {
        let transcript = AppAttestTranscript.revokeDelegation(
            origin: LifecycleGateway.origin, challengeID: challenge.id, challenge: challenge.challenge,
            installationHandle: handle, relayPubkey: relay, generation: generation)
        return """
            {"v":1,"challenge_id":"\(challenge.id)","challenge":"\(challenge.challenge)",\
            "installation_handle":"\(handle)","relay_pubkey":"\(relay)","generation":\(generation),\
            "assertion":"\(try proof(transcript))"}
            """
    }

    static func revokeInstallation(
        challenge: LifecycleChallenge, handle: String, epoch: Int64, proof: Proof
    ) throws -> String {
        let transcript = AppAttestTranscript.revokeInstallation(
            origin: LifecycleGateway.origin, challengeID: challenge.id, challenge: challenge.challenge,
            installationHandle: handle, endpointEpoch: epoch, newEndpointEpoch: epoch + 1)
        return """
            {"v":1,"challenge_id":"\(challenge.id)","challenge":"\(challenge.challenge)",\
            "installation_handle":"\(handle)","endpoint_epoch":\(epoch),"new_endpoint_epoch":\(epoch + 1),\
            "assertion":"\(try proof(transcript))"}
            """
    }
}

/// A fresh relay identity's x-only public key as lowercase hex.
func lifecycleRelayKey() -> String {
    while true {
        if let key = SchnorrSigningKey(secretKey: (0..<32).map { _ in UInt8.random(in: 0...255) }) {
            return key.publicKey.hex
        }
    }
}

/// Runs `body(index)` on `count` threads that start together, and `meanwhile` on the calling
/// thread while they run; returns the results by index.
func lifecycleConcurrently<Value: Sendable>(
    _ count: Int, meanwhile: () -> Void = {}, _ body: @escaping @Sendable (Int) -> Value
) -> [Value] {
    let results = Mutex<[Int: Value]>([:])
    let start = DispatchSemaphore(value: 0)
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            start.wait()
            let value = body(index)
            results.withLock { $0[index] = value }
            group.leave()
        }
        thread.start()
    }
    for _ in 0..<count { start.signal() }
    meanwhile()
    group.wait()
    return results.withLock { results in (0..<count).map { results[$0]! } }
}

/// The parsed JSON object of a response body.
func lifecycleObject(_ response: HTTPTestResponse) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
}

extension LifecycleGateway {
    /// The value of one series in the gateway's `/metrics` scrape (nil when absent).
    func scrapedValue(_ series: String) throws -> Double? {
        let response = try gateway.get("/metrics")
        for line in response.bodyText.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}

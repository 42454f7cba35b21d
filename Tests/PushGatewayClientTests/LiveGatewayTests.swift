import Foundation
import GatewayCredentials
import PushCrypto
import PushGateway
import PushGatewayClient
import PushNostr
import PushPostgres
import PushTestSupport
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An in-process gateway on a migrated PostgreSQL database of the test command, trusting a synthetic
/// App Attest CA, and the client talking to it over real HTTP.
final class LiveGateway {
    static let origin = "https://push.buzz.xyz"
    static let profile = "buzz-ios-production"

    let authority: SyntheticAppAttestAuthority
    let gateway: TestGateway
    private let admin: PostgresConnection?

    /// `database: .unreachable` gives a gateway whose every transaction fails (503).
    init(
        database: TestGateway.Database? = nil,
        _ adjust: (ConfigurationTestEnvironment) -> ConfigurationTestEnvironment = { $0 }
    ) throws {
        let authority = try SyntheticAppAttestAuthority()
        let migrated = try database == nil ? MigratedTestDatabase() : nil
        gateway = try TestGateway(database: database ?? .migrated(migrated!)) {
            // Tests ask for many challenges from one address.
            adjust(try $0.trusting(authority).with("PUSH_GATEWAY_CHALLENGE_RATE_PER_MINUTE", "600000"))
        }
        admin = try migrated?.database.connect()
        self.authority = authority
    }

    func service() -> SyntheticAppAttestService { SyntheticAppAttestService(authority: authority) }

    /// A client of this gateway through `transport` (by default straight over URLSession).
    func client(
        _ service: SyntheticAppAttestService, store: InMemoryInstallationStateStore,
        transport: ScriptedTransport? = nil,
        retry: RetryPolicy
    ) -> PushGatewayClient {
        PushGatewayClient(
            configuration: .init(
                origin: Self.origin, appProfile: Self.profile,
                serviceURL: URL(string: "http://127.0.0.1:\(gateway.publicPort)"), retry: retry),
            appAttest: service, store: store, transport: transport ?? ScriptedTransport(next: Self.transport))
    }

    /// Generous: no test here is about the timeout, and a loaded 2-core machine running the whole
    /// suite has taken more than 10 s for one lifecycle request.
    static let transport = URLSessionTransport(session: URLSession(configuration: .ephemeral), timeout: 60)

    func query(_ sql: String, _ parameters: [PostgresParameter] = []) throws -> PostgresResult {
        guard let admin else { throw TestSupportError("no database") }
        return try admin.query(sql, parameters)
    }

    /// The installation row: epoch, revoked, key id (standard base64).
    func installation(_ handle: String) throws -> (epoch: Int64?, revoked: Bool?, keyID: String?) {
        let row = try query(
            "SELECT endpoint_epoch, revoked_at IS NOT NULL, encode(app_attest_key_id, 'base64') FROM installations "
                + "WHERE handle = $1::uuid", [.text(handle)])
        return (try row.int64(row: 0, column: 0), try row.bool(row: 0, column: 1), try row.string(row: 0, column: 2))
    }

    func installationCount() throws -> Int64? {
        try query("SELECT count(*) FROM installations").int64(row: 0, column: 0)
    }

    /// The delegation row of `relay`: generation, epoch, revoked.
    func delegation(_ handle: String, relay: String) throws -> (generation: Int64?, epoch: Int64?, revoked: Bool?) {
        let row = try query(
            "SELECT generation, endpoint_epoch, revoked_at IS NOT NULL FROM delegations "
                + "WHERE installation_handle = $1::uuid AND relay_pubkey = decode($2, 'hex')",
            [.text(handle), .text(relay)])
        return (try row.int64(row: 0, column: 0), try row.int64(row: 0, column: 1), try row.bool(row: 0, column: 2))
    }

    /// The grant opened with the gateway's own grant keyring.
    func open(_ grant: Grant) throws -> EndpointGrant {
        try #require(
            EndpointGrant.open(
                grant.endpointGrant,
                with: SealedEnvelope(purpose: .endpointGrant, keyring: Keyring(gateway.configuration.grantKeys))))
    }
}

/// A fresh relay identity's x-only public key as lowercase hex.
func liveRelayKey() -> String {
    while true {
        if let key = SchnorrSigningKey(secretKey: (0..<32).map { _ in UInt8.random(in: 0...255) }) {
            return key.publicKey.hex
        }
    }
}

@Suite(
    "PushGatewayClient against a live gateway and PostgreSQL: the whole lifecycle and its retry paths",
    .tags(.postgres), .testBodyThreads)
struct LiveGatewayTests {
    let sleeps = RecordedSleeps()
    let store = InMemoryInstallationStateStore()

    @Test(
        "register, delegate, re-delegate, rotate, delegate again, revoke a delegation, revoke the installation, enroll again"
    )
    func wholeLifecycle() async throws {
        let live = try LiveGateway()
        let service = live.service()
        let client = live.client(service, store: store, retry: sleeps.policy())
        let endpoint = randomEndpoint()

        let enrolled = try await client.register(endpoint: endpoint)
        #expect(enrolled.change == .enrolled)
        let handle = enrolled.installation.handle
        #expect(try live.installation(handle) == (1, false, service.generatedKeys.first))
        #expect(enrolled.installation.endpointEpoch == 1)
        #expect(try await client.register(endpoint: endpoint).change == .unchanged)

        let first = liveRelayKey()
        let second = liveRelayKey()
        let firstGrant = try await client.delegate(relayPubkey: first)
        let secondGrant = try await client.delegate(relayPubkey: second)
        let opened = try live.open(firstGrant)
        #expect(Hex.encode(opened.relayPublicKey) == first)
        #expect(opened.endpointEpoch == 1 && opened.generation == 1 && opened.expiresAt == firstGrant.expiresAt)
        #expect(opened.appProfile == LiveGateway.profile)
        #expect(try live.open(secondGrant).generation == 1)
        let replacement = try await client.delegate(relayPubkey: first)
        #expect(try live.open(replacement).generation == 2)
        #expect(try live.delegation(handle, relay: first) == (2, 1, false))

        let newEndpoint = randomEndpoint()
        let rotated = try await client.register(endpoint: newEndpoint)
        #expect(rotated.change == .rotated)
        #expect(rotated.relaysToDelegateAgain == [first, second].sorted())
        #expect(try live.installation(handle).epoch == 2)
        let again = try await client.delegate(relayPubkey: first)
        #expect(try live.open(again).endpointEpoch == 2)
        #expect(try live.open(again).generation == 3)
        #expect(try await client.state().relaysToDelegateAgain == [second])

        try await client.revokeDelegation(relayPubkey: first)
        #expect(try live.delegation(handle, relay: first) == (3, 2, true))
        try await client.revokeInstallation()
        #expect(try live.installation(handle).revoked == true)
        #expect(try await client.state() == InstallationState())

        // The token is free once its installation is revoked: a new key enrolls it again.
        let renewed = try await client.register(endpoint: newEndpoint)
        #expect(renewed.change == .enrolled && renewed.installation.handle != handle)
        #expect(service.generatedKeys.count == 2)
        #expect(sleeps.all.isEmpty)
    }

    @Test("an enrollment request lost on the way is sent again as the same body, with the same key, and enrolls")
    func lostEnrollmentRequest() async throws {
        let live = try LiveGateway()
        let service = live.service()
        let transport = ScriptedTransport(next: LiveGateway.transport) { path, index in
            path == AppRoute.enroll.path && index == 0 ? .dropRequest : .pass
        }
        let installation = try await live.client(service, store: store, transport: transport, retry: sleeps.policy())
            .enroll(endpoint: randomEndpoint())
        let bodies = transport.requests(to: .enroll).map(\.body)
        #expect(bodies.count == 2 && bodies[0] == bodies[1])
        #expect(service.generatedKeys.count == 1 && service.attestCalls.count == 1)
        #expect(try live.installation(installation.handle) == (1, false, service.generatedKeys[0]))
        #expect(try live.installationCount() == 1)
    }

    @Test("Apple's serverUnavailable is retried with the same key and clientDataHash, and the gateway accepts it")
    func attestationRetried() async throws {
        let live = try LiveGateway()
        let service = live.service()
        service.makeAttestationUnavailable(times: 2)
        let installation = try await live.client(service, store: store, retry: sleeps.policy())
            .enroll(endpoint: randomEndpoint())
        #expect(service.generatedKeys.count == 1)
        #expect(service.attestCalls.count == 3 && Set(service.attestCalls).count == 1)
        #expect(try live.installation(installation.handle).keyID == service.generatedKeys[0])
        #expect(sleeps.all == [1, 2])
    }

    @Test(
        "a lost enrollment answer: the resent body finds its challenge used, and a new key finds the token held (404)")
    func lostEnrollmentAnswer() async throws {
        let live = try LiveGateway()
        let service = live.service()
        let transport = ScriptedTransport(next: LiveGateway.transport) { path, index in
            path == AppRoute.enroll.path && index == 0 ? .dropAnswer : .pass
        }
        await #expect(throws: PushGatewayClientError.notAuthorized) {
            try await live.client(service, store: store, transport: transport, retry: sleeps.policy())
                .enroll(endpoint: randomEndpoint())
        }
        let keys = transport.requests(to: .enroll).map { $0.string("key_id") }
        #expect(keys == [service.generatedKeys[0], service.generatedKeys[0], service.generatedKeys[1]])
        #expect(try live.installationCount() == 1)
        let held = try live.query("SELECT encode(app_attest_key_id, 'base64') FROM installations")
        #expect(try held.string(row: 0, column: 0) == service.generatedKeys[0])
        #expect(try store.load().installation == nil)
    }

    @Test("a lost delegation answer is retried with the next generation; the gateway keeps that one")
    func lostDelegationAnswer() async throws {
        let live = try LiveGateway()
        let service = live.service()
        let transport = ScriptedTransport(next: LiveGateway.transport) { path, index in
            path == AppRoute.delegate.path && index == 0 ? .dropAnswer : .pass
        }
        let client = live.client(service, store: store, transport: transport, retry: sleeps.policy())
        let installation = try await client.enroll(endpoint: randomEndpoint())
        let relay = liveRelayKey()
        let grant = try await client.delegate(relayPubkey: relay)
        #expect(transport.requests(to: .delegate).map { $0.integer("generation") } == [1, 2])
        #expect(try live.open(grant).generation == 2)
        #expect(try live.delegation(installation.handle, relay: relay) == (2, 1, false))
        try await client.revokeDelegation(relayPubkey: relay)
        #expect(try live.delegation(installation.handle, relay: relay).revoked == true)
    }

    @Test("a lost rotation answer: the retry at the old epoch is 404, and rotating on from the next epoch confirms it")
    func lostRotationAnswer() async throws {
        let live = try LiveGateway()
        let service = live.service()
        let transport = ScriptedTransport(next: LiveGateway.transport) { path, index in
            path == AppRoute.rotateEndpoint.path && index == 0 ? .dropAnswer : .pass
        }
        let client = live.client(service, store: store, transport: transport, retry: sleeps.policy())
        let installation = try await client.enroll(endpoint: randomEndpoint())
        let newEndpoint = randomEndpoint()
        try await client.rotateEndpoint(to: newEndpoint)
        #expect(transport.requests(to: .rotateEndpoint).map { $0.integer("endpoint_epoch") } == [1, 1, 2])
        #expect(try live.installation(installation.handle).epoch == 3)
        #expect(try await client.state().installation?.endpointEpoch == 3)
        #expect(try await client.state().installation?.endpoint == newEndpoint)
        let grant = try await client.delegate(relayPubkey: liveRelayKey())
        #expect(try live.open(grant).endpointEpoch == 3)
    }

    @Test("lost revocation answers: both revocations are repeated and answer 200 again")
    func lostRevocationAnswers() async throws {
        let live = try LiveGateway()
        let service = live.service()
        let transport = ScriptedTransport(next: LiveGateway.transport) { path, index in
            [AppRoute.revokeDelegation.path, AppRoute.revokeInstallation.path].contains(path) && index == 0
                ? .dropAnswer : .pass
        }
        let client = live.client(service, store: store, transport: transport, retry: sleeps.policy())
        let installation = try await client.enroll(endpoint: randomEndpoint())
        let relay = liveRelayKey()
        _ = try await client.delegate(relayPubkey: relay)
        try await client.revokeDelegation(relayPubkey: relay)
        try await client.revokeInstallation()
        #expect(transport.requests(to: .revokeDelegation).count == 2)
        #expect(transport.requests(to: .revokeInstallation).count == 2)
        #expect(try live.delegation(installation.handle, relay: relay).revoked == true)
        #expect(try live.installation(installation.handle).revoked == true)
        #expect(try await client.state() == InstallationState())
        #expect(sleeps.all == [1, 1])
    }

    @Test("a 503 from a locked installation row is retried after a backoff with a fresh challenge, and then delegates")
    func temporarilyUnavailable() async throws {
        let live = try LiveGateway()
        let service = live.service()
        let enrolledClient = live.client(service, store: store, retry: sleeps.policy())
        let installation = try await enrolledClient.enroll(endpoint: randomEndpoint())
        let holder = try #require(live.gateway.database).database.connect()
        try holder.query("BEGIN")
        try holder.query(
            "SELECT 1 FROM installations WHERE handle = $1::uuid FOR UPDATE", [.text(installation.handle)])
        let lock = Mutex<PostgresConnection?>(holder)
        let waits = Mutex<[TimeInterval]>([])
        let releasing = RetryPolicy(
            jitter: false,
            sleep: { seconds in
                waits.withLock { $0.append(seconds) }
                lock.withLock { holder in
                    _ = try? holder?.query("ROLLBACK")
                    holder = nil
                }
            })
        let transport = ScriptedTransport(next: LiveGateway.transport)
        let grant = try await live.client(service, store: store, transport: transport, retry: releasing)
            .delegate(relayPubkey: liveRelayKey())
        let sent = transport.requests(to: .delegate)
        #expect(sent.count == 2)
        #expect(sent[0].string("challenge_id") != sent[1].string("challenge_id"))
        #expect(waits.withLock { $0 } == [1])
        #expect(try live.open(grant).generation == 2)
    }

    @Test("a gateway whose database stays unreachable: the same enrollment body each attempt, then serverUnavailable")
    func databaseUnreachable() async throws {
        let live = try LiveGateway(database: .unreachable)
        let service = live.service()
        let transport = ScriptedTransport(next: LiveGateway.transport)
        await #expect(throws: PushGatewayClientError.serverUnavailable(retryAfterSeconds: nil)) {
            try await live.client(service, store: store, transport: transport, retry: sleeps.policy(maxAttempts: 3))
                .enroll(endpoint: randomEndpoint())
        }
        let bodies = transport.requests(to: .enroll).map(\.body)
        #expect(bodies.count == 3 && Set(bodies).count == 1)
        #expect(sleeps.all == [1, 2])
        #expect(try store.load().installation == nil)
        #expect(try store.load().keyAttested == true)
    }

    @Test("a 429 from the gateway's challenge bucket is waited out for its Retry-After, then the call goes on")
    func rateLimitedChallenge() async throws {
        let live = try LiveGateway { $0.with("PUSH_GATEWAY_CHALLENGE_RATE_PER_MINUTE", "60") }
        // Empty the bucket (burst 10) from this address.
        while try live.gateway.post(AppRoute.challenge.path, #"{"v":1}"#).status == 200 {}
        let waits = Mutex<[TimeInterval]>([])
        let waiting = RetryPolicy(
            jitter: false,
            sleep: { seconds in
                waits.withLock { $0.append(seconds) }
                try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
            })
        let transport = ScriptedTransport(next: LiveGateway.transport)
        _ = try await live.client(live.service(), store: store, transport: transport, retry: waiting)
            .enroll(endpoint: randomEndpoint())
        #expect(transport.requests(to: .challenge).count == 2)
        #expect(waits.withLock { $0 } == [1])
    }
}

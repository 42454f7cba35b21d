import Foundation
import PushCrypto
import PushDelivery
import PushHTTP
import PushNostr
import PushPostgres
import PushRelayClient
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayAPI
@testable import GatewayConfiguration
@testable import GatewayCredentials
@testable import PushGateway
@testable import PushGatewayCommands

/// An in-process push service: answers scripted outcomes (then `fallback`) and records every
/// wake. `beforeAnswer` runs inside `submit`, e.g. to block or to look at the database; the report
/// comes back on the submitting thread, as a service without I/O of its own would send it.
final class ScriptedProvider: PushProvider {
    private struct State {
        var script: [PushOutcome]
        var wakes: [PushWake] = []
    }

    let service: PushService
    private let state: Mutex<State>
    private let fallback: PushOutcome
    private let beforeAnswer: (@Sendable (PushWake) -> Void)?

    init(
        _ script: [PushOutcome] = [], fallback: PushOutcome = .accepted, service: PushService = .apns,
        beforeAnswer: (@Sendable (PushWake) -> Void)? = nil
    ) {
        state = Mutex(State(script: script))
        self.fallback = fallback
        self.service = service
        self.beforeAnswer = beforeAnswer
    }

    func submit(_ wake: PushWake, completion: @escaping @Sendable (PushReport) -> Void) {
        beforeAnswer?(wake)
        let outcome = state.withLock { state in
            state.wakes.append(wake)
            return state.script.isEmpty ? fallback : state.script.removeFirst()
        }
        completion(Self.report(outcome, service: service))
    }

    func shutdown() {}

    /// What a service that answered `outcome` to one request would report.
    static func report(_ outcome: PushOutcome, service: PushService) -> PushReport {
        let (requestOutcome, status, reason): (PushRequestOutcome, Int, String?) =
            switch outcome {
            case .accepted: (.accepted, 200, nil)
            case .endpointDead: (.invalidEndpoint, 410, service == .apns ? "Unregistered" : "UNREGISTERED")
            case .retry: (.transient, 503, service == .apns ? "ServiceUnavailable" : "UNAVAILABLE")
            case .configurationFault:
                (.configurationFault, 403, service == .apns ? "Forbidden" : "THIRD_PARTY_AUTH_ERROR")
            case .permanentRequestFault: (.rejected, 400, service == .apns ? "BadTopic" : "INVALID_ARGUMENT")
            }
        return PushReport(
            outcome: outcome, service: service, requestOutcome: requestOutcome, requests: 1, status: status,
            reason: reason, sendDuration: .milliseconds(1))
    }

    var wakes: [PushWake] { state.withLock { $0.wakes } }
    var callCount: Int { state.withLock { $0.wakes.count } }

    /// The wakes as the relay's deliveries: their request ids parsed back (every relay wake has one).
    var attempts: [ScriptedAttempt] {
        wakes.map {
            ScriptedAttempt(
                deviceToken: $0.deviceToken, profileID: $0.profileID, requestID: CanonicalUUID($0.requestID ?? "")!,
                expiresAt: $0.expiresAt, style: $0.style)
        }
    }
}

/// One wake a `ScriptedProvider` got, its request id as the relay sent it.
struct ScriptedAttempt: Equatable {
    let deviceToken: [UInt8]
    let profileID: String
    let requestID: CanonicalUUID
    let expiresAt: Int64
    let style: WakeStyle
}

/// One enrolled installation with a delegation to `relay` and its sealed grant.
struct DeliveryScenario: Sendable {
    let handle: String
    let relay: SchnorrSigningKey
    let token: [UInt8]
    let grant: EndpointGrant
    let sealedGrant: String
}

/// A `TestGateway` on a migrated database with a scripted sender; helpers to enroll by SQL and to
/// post signed deliveries.
final class DeliveryTestGateway {
    static let profileID = "buzz-ios-production"
    static let host = "push.buzz.xyz"

    let gateway: TestGateway
    let database: TemporaryDatabase
    /// The role `serve`'s sessions log in as.
    let runtimeRole: TemporaryRole
    /// The pooler `serve`'s sessions go through in scripts/test's pgbouncer pass.
    let pooler: PgBouncer?
    let sender: ScriptedProvider
    let admin: PostgresConnection

    var server: GatewayServer { gateway.server }
    var configuration: GatewayConfiguration { gateway.configuration }
    var port: Int { gateway.publicPort }

    init(
        sender: ScriptedProvider = ScriptedProvider(),
        _ adjust: (ConfigurationTestEnvironment) -> ConfigurationTestEnvironment = { $0 },
        requestTimeout: Duration? = nil, serverURL: String? = nil, logger: Logger = TestLogs.logger(),
        overcommitModePath: String = AddressSpaceFacts.overcommitModePath,
        tuning: (inout HTTPServerConfiguration) -> Void = { _ in }
    ) throws {
        // The shared test server unless the test brings its own (e.g. a PostgresTestServer to stop).
        let migrated = try MigratedTestDatabase(serverURL: serverURL)
        gateway = try TestGateway(
            database: .migrated(migrated), providers: .every(sender), logger: logger,
            overcommitModePath: overcommitModePath, adjust,
            tuning: { configuration in
                if let requestTimeout { configuration.requestTimeout = requestTimeout }
                tuning(&configuration)
            })
        database = migrated.database
        runtimeRole = migrated.role
        pooler = migrated.pooler
        self.sender = sender
        admin = try database.connect()
    }

    static func randomRelayKey() -> SchnorrSigningKey {
        SchnorrSigningKey(secretKey: SHA256.hash((0..<32).map { _ in UInt8.random(in: 0...255) }))!
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    /// Inserts a live installation holding a fresh random token and a delegation of it to `relay`,
    /// and seals the grant exactly as the delegate route would.
    func enroll(
        relay: SchnorrSigningKey = DeliveryTestGateway.randomRelayKey(), epoch: Int64 = 1, generation: Int64 = 1,
        grantLifetime: Int64 = 3600
    ) throws -> DeliveryScenario {
        let now = Self.now()
        let handle = try CanonicalUUID.version4().text
        let token = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let sealedToken = try SealedEnvelope(purpose: .tokenCustody, keyring: Keyring(configuration.tokenKeys)).seal(
            token)
        let fingerprint = EndpointFingerprinter(key: configuration.fingerprintKey.bytes)
            .fingerprint(profileID: Self.profileID, token: token)
        try DeliveryFixtures.insertInstallation(
            admin, handle: handle, appProfile: Self.profileID, sealedToken: Array(sealedToken.utf8),
            fingerprint: fingerprint, endpointEpoch: epoch, expiresAt: now + 7200)
        let grant = try delegate(
            handle: handle, relay: relay, epoch: epoch, generation: generation,
            expiresAt: now + grantLifetime)
        return DeliveryScenario(
            handle: handle, relay: relay, token: token, grant: grant.grant, sealedGrant: grant.sealed)
    }

    /// Writes (or overwrites with a new generation) the delegation row and seals its grant.
    func delegate(
        handle: String, relay: SchnorrSigningKey, epoch: Int64, generation: Int64, expiresAt: Int64
    ) throws -> (grant: EndpointGrant, sealed: String) {
        let delegationID = try CanonicalUUID.version4()
        try DeliveryFixtures.upsertDelegation(
            admin, installationHandle: handle, relayPublicKey: relay.publicKey.bytes, delegationID: delegationID.text,
            generation: generation, endpointEpoch: epoch, notBefore: Self.now() - 60, expiresAt: expiresAt)
        let grant = EndpointGrant(
            delegationID: delegationID, relayPublicKey: relay.publicKey.bytes, appProfile: Self.profileID,
            endpointEpoch: epoch, generation: generation, expiresAt: expiresAt)
        return (
            grant,
            try grant.sealed(with: SealedEnvelope(purpose: .endpointGrant, keyring: Keyring(configuration.grantKeys)))
        )
    }

    /// A delivery body for `scenario` (or the given grant text).
    static func body(grant: String, requestID: CanonicalUUID, expiresAt: Int64) -> [UInt8] {
        DeliverCommand.requestBody(grant: grant, requestID: requestID, expiresAt: expiresAt)
    }

    /// A NIP-98 header by `key` for `body` posted to `url`.
    static func authorization(
        key: SchnorrSigningKey, url: String, body: [UInt8], createdAt: Int64 = now()
    ) throws
        -> String
    {
        try RelayDeliveryPoster(key: key).authorization(url: url, body: body, now: createdAt)
    }

    /// Posts signed deliveries to this gateway; Sendable, so concurrent tests can share it.
    var client: DeliveryClient { DeliveryClient(port: port) }

    /// The URL a relay signs when it talks to this gateway directly.
    var directURL: String { client.directURL }

    func deliver(
        _ scenario: DeliveryScenario, requestID: CanonicalUUID? = nil, expiresAt: Int64? = nil,
        grant: String? = nil, signer: SchnorrSigningKey? = nil, createdAt: Int64? = nil
    ) throws -> HTTPTestResponse {
        try client.deliver(
            scenario, requestID: requestID, expiresAt: expiresAt, grant: grant, signer: signer, createdAt: createdAt)
    }

    func post(body: [UInt8], headers: [String], host: String? = DeliveryTestGateway.host) throws -> HTTPTestResponse {
        try client.post(body: body, headers: headers, host: host)
    }

    func isReserved(_ scenario: DeliveryScenario, _ requestID: CanonicalUUID) throws -> Bool {
        try DeliveryFixtures.isReserved(
            admin, relayPublicKey: scenario.relay.publicKey.bytes, requestID: requestID.text)
    }
}

/// The exact `invalid_grant` answer.
func expectInvalidGrant(_ response: HTTPTestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(response.status == 404, sourceLocation: sourceLocation)
    #expect(response.bodyText == #"{"error":"invalid_grant"}"#, sourceLocation: sourceLocation)
}

/// The relay side of the tests: signed posts to the delivery route of the gateway on `port`.
struct DeliveryClient: Sendable {
    let port: Int

    /// The URL a relay signs when it talks to this gateway directly.
    var directURL: String { "http://\(DeliveryTestGateway.host)\(GatewayRoute.deliveries.path)" }

    /// Posts a signed delivery for `scenario`: a fresh request id and `expires_at` 60 s ahead
    /// unless given; signed by the scenario's relay for the direct URL unless told otherwise.
    /// The same request id, body and `created_at` give the same NIP-98 event id, so a test that
    /// retries a request id within one second passes another `createdAt` to get a fresh event.
    func deliver(
        _ scenario: DeliveryScenario, requestID: CanonicalUUID? = nil, expiresAt: Int64? = nil,
        grant: String? = nil, signer: SchnorrSigningKey? = nil, createdAt: Int64? = nil
    ) throws -> HTTPTestResponse {
        let body = DeliveryTestGateway.body(
            grant: grant ?? scenario.sealedGrant, requestID: try requestID ?? CanonicalUUID.version4(),
            expiresAt: expiresAt ?? DeliveryTestGateway.now() + 60)
        let header = try DeliveryTestGateway.authorization(
            key: signer ?? scenario.relay, url: directURL, body: body,
            createdAt: createdAt ?? DeliveryTestGateway.now())
        return try post(body: body, headers: ["Authorization: \(header)"])
    }

    /// Posts `body` to the delivery route (or `path`) with `headers` (`Host` unless `host` is nil).
    func post(
        body: [UInt8], headers: [String], host: String? = DeliveryTestGateway.host,
        path: String = GatewayRoute.deliveries.path
    ) throws -> HTTPTestResponse {
        let client = try HTTPTestClient(port: port, timeout: .seconds(30))
        var head = "POST \(path) HTTP/1.1\r\n"
        if let host { head += "Host: \(host)\r\n" }
        head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
        for header in headers { head += header + "\r\n" }
        try client.send(Array((head + "\r\n").utf8) + body)
        return try client.readResponse()
    }
}

import GatewayConfiguration
import GatewayCredentials
import PushCrypto
import PushGateway
import PushNostr
import PushPostgres
import PushTestSupport

/// One installation delegated to one relay, as the lifecycle routes would have left it, with the
/// grant the relay holds.
struct BenchInstallation: Sendable {
    let relay: SchnorrSigningKey
    let grant: EndpointGrant
    let sealedGrant: String
}

enum BenchEnrollment {
    /// The benchmark's installations: as many as scripts/lib/pgbench.sh gives pgbench, so both sides
    /// of the pgbench comparison admit on tables of the same size (docs/performance.md).
    static let benchmarkCount = 1000

    /// Inserts `count` live installations of the gateway's first profile, each delegated to its own
    /// random relay (or all to `sharedRelay`: a batch is signed by one relay), through the runtime
    /// role (it has DML on the gateway tables), and seals each grant with the gateway's grant
    /// keyring. Each installation has its own endpoint fingerprint, so a relay connection working
    /// through its own installations never waits on another connection's row locks or quota window.
    static func enroll(
        count: Int, configuration: GatewayConfiguration, connection: PostgresConnection, now: Int64,
        sharedRelay: SchnorrSigningKey? = nil
    ) throws -> [BenchInstallation] {
        guard let profile = configuration.profiles.first else { throw BenchError("no profile is configured") }
        let keys = GatewayKeys(configuration: configuration)
        let lifetime = min(configuration.maxGrantLifetimeSeconds, 86_400)
        return try (0..<count).map { _ in
            guard let relay = try sharedRelay ?? SchnorrSigningKey(secretKey: try SecureRandom.bytes(32)) else {
                throw BenchError("a random relay key was not a valid secp256k1 key")
            }
            let handle = try CanonicalUUID.version4()
            let token = try SecureRandom.bytes(32)
            try DeliveryFixtures.insertInstallation(
                connection, handle: handle.text, appProfile: profile.id,
                sealedToken: Array(try keys.tokens.seal(token).utf8),
                fingerprint: keys.fingerprinter.fingerprint(profileID: profile.id, token: token), endpointEpoch: 1,
                expiresAt: now + lifetime)
            let delegationID = try CanonicalUUID.version4()
            try DeliveryFixtures.upsertDelegation(
                connection, installationHandle: handle.text, relayPublicKey: relay.publicKey.bytes,
                delegationID: delegationID.text, generation: 1, endpointEpoch: 1, notBefore: now - 60,
                expiresAt: now + lifetime)
            let grant = EndpointGrant(
                delegationID: delegationID, relayPublicKey: relay.publicKey.bytes, appProfile: profile.id,
                endpointEpoch: 1, generation: 1, expiresAt: now + lifetime)
            return BenchInstallation(relay: relay, grant: grant, sealedGrant: try grant.sealed(with: keys.grants))
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import PushCrypto
import PushJSON

/// The bytes an App Attest operation signs (docs/protocol.md §3): `<domain> "\n" <compact JSON>`, with
/// members in the route's fixed order and every value copied from the validated request as received.
public struct AppAttestTranscript: Sendable, Equatable {
    /// A JSON member value: a string exactly as received, or an integer in shortest decimal.
    public enum Value: Sendable, Equatable {
        case string(String)
        case integer(Int64)
    }

    /// The five signed routes.
    public enum Route: String, Sendable, CaseIterable {
        case enroll
        case delegate
        case rotateEndpoint
        case revokeDelegation
        case revokeInstallation

        /// Domain separation string (docs/protocol.md §3 table).
        public var domain: String {
            switch self {
            case .enroll: "buzz.push.enroll.v1"
            case .delegate: "buzz.push.delegate.v1"
            case .rotateEndpoint: "buzz.push.rotate-endpoint.v1"
            case .revokeDelegation: "buzz.push.revoke-delegation.v1"
            case .revokeInstallation: "buzz.push.revoke-installation.v1"
            }
        }

        /// Request path (docs/protocol.md §4); the audience is the origin followed by it.
        public var path: String {
            switch self {
            case .enroll: "/v1/installations"
            case .delegate: "/v1/delegations"
            case .rotateEndpoint: "/v1/installations/endpoint"
            case .revokeDelegation: "/v1/delegations/revoke"
            case .revokeInstallation: "/v1/installations/revoke"
            }
        }
    }

    public let route: Route
    /// Members in transcript order, `v` and `audience` first.
    public let members: [(name: String, value: Value)]

    public static func == (lhs: AppAttestTranscript, rhs: AppAttestTranscript) -> Bool {
        lhs.route == rhs.route && lhs.members.elementsEqual(rhs.members) { $0.name == $1.name && $0.value == $1.value }
    }

    private init(route: Route, origin: String, members: [(String, Value)]) {
        self.route = route
        self.members = [("v", .integer(1)), ("audience", .string(origin + route.path))] + members
    }

    /// An assertion transcript (§4.3–§4.6): the challenge and the installation, then the route's own members.
    private init(
        asserting route: Route, origin: String, challengeID: String, challenge: String, installationHandle: String,
        _ members: [(String, Value)]
    ) {
        self.init(
            route: route, origin: origin,
            members: [
                ("challenge_id", .string(challengeID)), ("challenge", .string(challenge)),
                ("installation_handle", .string(installationHandle)),
            ] + members)
    }

    /// `buzz.push.enroll.v1` for `POST /v1/installations`.
    public static func enroll(
        origin: String, challengeID: String, challenge: String, keyID: String, appProfile: String, endpoint: String,
        endpointEpoch: Int64, expiresAt: Int64
    ) -> AppAttestTranscript {
        AppAttestTranscript(
            route: .enroll, origin: origin,
            members: [
                ("challenge_id", .string(challengeID)), ("challenge", .string(challenge)), ("key_id", .string(keyID)),
                ("app_profile", .string(appProfile)), ("endpoint", .string(endpoint)),
                ("endpoint_epoch", .integer(endpointEpoch)), ("expires_at", .integer(expiresAt)),
            ])
    }

    /// `buzz.push.delegate.v1` for `POST /v1/delegations`.
    public static func delegate(
        origin: String, challengeID: String, challenge: String, installationHandle: String, endpointEpoch: Int64,
        generation: Int64, relayPubkey: String, notBefore: Int64, expiresAt: Int64
    ) -> AppAttestTranscript {
        AppAttestTranscript(
            asserting: .delegate, origin: origin, challengeID: challengeID, challenge: challenge,
            installationHandle: installationHandle,
            [
                ("endpoint_epoch", .integer(endpointEpoch)), ("generation", .integer(generation)),
                ("relay_pubkey", .string(relayPubkey)), ("not_before", .integer(notBefore)),
                ("expires_at", .integer(expiresAt)),
            ])
    }

    /// `buzz.push.rotate-endpoint.v1` for `POST /v1/installations/endpoint`.
    public static func rotateEndpoint(
        origin: String, challengeID: String, challenge: String, installationHandle: String, endpointEpoch: Int64,
        newEndpointEpoch: Int64, endpoint: String
    ) -> AppAttestTranscript {
        AppAttestTranscript(
            asserting: .rotateEndpoint, origin: origin, challengeID: challengeID, challenge: challenge,
            installationHandle: installationHandle,
            [
                ("endpoint_epoch", .integer(endpointEpoch)), ("new_endpoint_epoch", .integer(newEndpointEpoch)),
                ("endpoint", .string(endpoint)),
            ])
    }

    /// `buzz.push.revoke-delegation.v1` for `POST /v1/delegations/revoke`.
    public static func revokeDelegation(
        origin: String, challengeID: String, challenge: String, installationHandle: String, relayPubkey: String,
        generation: Int64
    ) -> AppAttestTranscript {
        AppAttestTranscript(
            asserting: .revokeDelegation, origin: origin, challengeID: challengeID, challenge: challenge,
            installationHandle: installationHandle,
            [("relay_pubkey", .string(relayPubkey)), ("generation", .integer(generation))])
    }

    /// `buzz.push.revoke-installation.v1` for `POST /v1/installations/revoke`.
    public static func revokeInstallation(
        origin: String, challengeID: String, challenge: String, installationHandle: String, endpointEpoch: Int64,
        newEndpointEpoch: Int64
    ) -> AppAttestTranscript {
        AppAttestTranscript(
            asserting: .revokeInstallation, origin: origin, challengeID: challengeID, challenge: challenge,
            installationHandle: installationHandle,
            [("endpoint_epoch", .integer(endpointEpoch)), ("new_endpoint_epoch", .integer(newEndpointEpoch))])
    }

    /// The transcript bytes: the enrollment clientData, or the preimage of an assertion's clientDataHash.
    public var bytes: [UInt8] {
        var writer = JSONWriter(prefix: Array((route.domain + "\n").utf8))
        writer.beginObject()
        for member in members {
            switch member.value {
            case .string(let text): writer.member(member.name, text)
            case .integer(let number): writer.member(member.name, number)
            }
        }
        writer.endObject()
        return writer.bytes
    }

    /// SHA-256 of ``bytes`` (docs/protocol.md §3: `clientDataHash`).
    public var clientDataHash: [UInt8] { SHA256.hash(bytes) }
}

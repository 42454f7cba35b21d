import Foundation

/// The routes an app calls (docs/protocol.md §4.1–§4.6).
public enum AppRoute: String, Sendable, CaseIterable {
    case challenge = "/v1/installations/challenges"
    case enroll = "/v1/installations"
    case delegate = "/v1/delegations"
    case rotateEndpoint = "/v1/installations/endpoint"
    case revokeDelegation = "/v1/delegations/revoke"
    case revokeInstallation = "/v1/installations/revoke"

    public var path: String { rawValue }

    /// The transcript domain of the route (docs/protocol.md §3); the challenge route has none.
    public var transcriptDomain: String? {
        switch self {
        case .challenge: return nil
        case .enroll: return "buzz.push.enroll.v1"
        case .delegate: return "buzz.push.delegate.v1"
        case .rotateEndpoint: return "buzz.push.rotate-endpoint.v1"
        case .revokeDelegation: return "buzz.push.revoke-delegation.v1"
        case .revokeInstallation: return "buzz.push.revoke-installation.v1"
        }
    }
}

/// The bytes App Attest signs for one call: `<domain>`, a line feed, then the compact JSON members in
/// the order of docs/protocol.md §3.
public struct Transcript: Sendable, Equatable {
    public let domain: String
    public let bytes: Data

    /// SHA-256 of ``bytes``: the `clientDataHash` for `attestKey` and `generateAssertion`.
    public var clientDataHash: Data { TranscriptDigest.hash(bytes) }
}

/// One App Attest call before its proof: the members both its transcript and its request body are
/// built from, so the two can never disagree (docs/protocol.md §3, §4.2–§4.6).
public struct LifecycleRequest: Sendable, Equatable {
    public let route: AppRoute
    /// The members after `v`, in transcript order, without `audience`.
    private let members: CompactJSONObject

    /// The body of `POST /v1/installations/challenges` (docs/protocol.md §4.1).
    public static let challengeBody = Data(#"{"v":1}"#.utf8)

    /// Every call's members start with `v` and its challenge (docs/protocol.md §3).
    private init(_ route: AppRoute, _ challenge: Challenge, _ members: [(name: String, value: CompactJSONObject.Value)])
    {
        self.route = route
        self.members = CompactJSONObject(
            [("v", .integer(1)), ("challenge_id", .string(challenge.id)), ("challenge", .string(challenge.value))]
                + members)
    }

    /// An assertion call (§4.3–§4.6) names the installation right after the challenge.
    private init(
        _ route: AppRoute, _ challenge: Challenge, installationHandle: String,
        _ members: [(name: String, value: CompactJSONObject.Value)]
    ) {
        self.init(route, challenge, [("installation_handle", .string(installationHandle))] + members)
    }

    /// Enrollment (§4.2): `key_id` is the string `generateKey()` returned, unchanged; the epoch is 1.
    public static func enroll(
        challenge: Challenge, keyID: String, appProfile: String, endpoint: String, expiresAt: Int64
    ) -> LifecycleRequest {
        LifecycleRequest(
            .enroll, challenge,
            [
                ("key_id", .string(keyID)), ("app_profile", .string(appProfile)), ("endpoint", .string(endpoint)),
                ("endpoint_epoch", .integer(1)), ("expires_at", .integer(expiresAt)),
            ])
    }

    /// Delegation to one relay (§4.3).
    public static func delegate(
        challenge: Challenge, installationHandle: String, endpointEpoch: Int64, generation: Int64,
        relayPubkey: String, notBefore: Int64, expiresAt: Int64
    ) -> LifecycleRequest {
        LifecycleRequest(
            .delegate, challenge, installationHandle: installationHandle,
            [
                ("endpoint_epoch", .integer(endpointEpoch)), ("generation", .integer(generation)),
                ("relay_pubkey", .string(relayPubkey)), ("not_before", .integer(notBefore)),
                ("expires_at", .integer(expiresAt)),
            ])
    }

    /// Rotation to a new device token (§4.4), from `endpointEpoch` to the next epoch.
    public static func rotateEndpoint(
        challenge: Challenge, installationHandle: String, endpointEpoch: Int64, endpoint: String
    ) -> LifecycleRequest {
        LifecycleRequest(
            .rotateEndpoint, challenge, installationHandle: installationHandle,
            epochAdvance(from: endpointEpoch) + [("endpoint", .string(endpoint))])
    }

    /// Revocation of the relay's current delegation (§4.5).
    public static func revokeDelegation(
        challenge: Challenge, installationHandle: String, relayPubkey: String, generation: Int64
    ) -> LifecycleRequest {
        LifecycleRequest(
            .revokeDelegation, challenge, installationHandle: installationHandle,
            [("relay_pubkey", .string(relayPubkey)), ("generation", .integer(generation))])
    }

    /// Revocation of the installation (§4.6), from `endpointEpoch` to the next epoch.
    public static func revokeInstallation(
        challenge: Challenge, installationHandle: String, endpointEpoch: Int64
    ) -> LifecycleRequest {
        LifecycleRequest(
            .revokeInstallation, challenge, installationHandle: installationHandle,
            epochAdvance(from: endpointEpoch))
    }

    /// A rotation and an installation revocation both move the installation from its current epoch to
    /// the next one (§4.4, §4.6).
    private static func epochAdvance(from endpointEpoch: Int64) -> [(name: String, value: CompactJSONObject.Value)] {
        [("endpoint_epoch", .integer(endpointEpoch)), ("new_endpoint_epoch", .integer(endpointEpoch + 1))]
    }

    /// The transcript for the gateway whose `PUSH_GATEWAY_ORIGIN` is `origin` (e.g.
    /// `https://push.buzz.xyz`): the members with `audience` = origin + path after `v`.
    public func transcript(origin: String) -> Transcript {
        var signed = members
        signed.insert("audience", .string(origin + route.path), at: 1)
        let domain = route.transcriptDomain ?? ""
        return Transcript(domain: domain, bytes: Data((domain + "\n" + signed.text).utf8))
    }

    /// The request body: the members (no `audience`) and the proof, standard base64 — `attestation`
    /// for enrollment, `assertion` for the other routes.
    public func body(proof: Data) -> Data {
        var body = members
        body.append(route == .enroll ? "attestation" : "assertion", .string(proof.base64EncodedString()))
        return Data(body.text.utf8)
    }
}

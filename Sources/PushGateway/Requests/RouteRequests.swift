import PushJSON
import PushNostr

/// `POST /v1/installations/challenges` (docs/protocol.md §4.1): `{"v":1}`.
public struct ChallengeRequest: Sendable, Equatable {
    public init(body: [UInt8]) throws(InvalidRequest) {
        _ = try RequestFields(body: body, names: ["v"])
    }
}

/// `POST /v1/installations` (docs/protocol.md §4.2). Time and profile rules need the clock and the
/// configuration, so the handler checks them.
public struct EnrollRequest: Sendable, Equatable {
    public let challengeID: Received<CanonicalUUID>
    public let challenge: Received<[UInt8]>
    public let keyID: Received<[UInt8]>
    public let attestation: [UInt8]
    public let appProfile: String
    public let endpoint: Received<[UInt8]>
    public let endpointEpoch: Int64
    public let expiresAt: Int64

    public init(body: [UInt8]) throws(InvalidRequest) {
        let fields = try RequestFields(
            body: body,
            names: [
                "v", "challenge_id", "challenge", "key_id", "attestation", "app_profile", "endpoint", "endpoint_epoch",
                "expires_at",
            ])
        challengeID = try fields.uuid("challenge_id")
        challenge = try fields.challenge("challenge")
        keyID = try fields.base64("key_id", sizes: 32...32)
        attestation = try fields.base64("attestation", sizes: 1...16384).value
        appProfile = try fields.string("app_profile")
        endpoint = try fields.endpoint("endpoint")
        endpointEpoch = try fields.integer("endpoint_epoch")
        expiresAt = try fields.unixTime("expires_at")
        guard endpointEpoch == 1 else { throw InvalidRequest() }
    }
}

/// `POST /v1/delegations` (docs/protocol.md §4.3).
public struct DelegateRequest: Sendable, Equatable {
    public let challengeID: Received<CanonicalUUID>
    public let challenge: Received<[UInt8]>
    public let installationHandle: Received<CanonicalUUID>
    public let endpointEpoch: Int64
    public let generation: Int64
    public let relayPublicKey: Received<XOnlyPublicKey>
    public let notBefore: Int64
    public let expiresAt: Int64
    public let assertion: [UInt8]

    public init(body: [UInt8]) throws(InvalidRequest) {
        let fields = try RequestFields(
            body: body,
            names: [
                "v", "challenge_id", "challenge", "installation_handle", "endpoint_epoch", "generation", "relay_pubkey",
                "not_before", "expires_at", "assertion",
            ])
        challengeID = try fields.uuid("challenge_id")
        challenge = try fields.challenge("challenge")
        installationHandle = try fields.uuid("installation_handle")
        endpointEpoch = try fields.integer("endpoint_epoch")
        generation = try fields.integer("generation")
        relayPublicKey = try fields.relayPublicKey("relay_pubkey")
        notBefore = try fields.unixTime("not_before")
        expiresAt = try fields.unixTime("expires_at")
        assertion = try fields.base64("assertion", sizes: 1...1024).value
        guard endpointEpoch >= 1, generation >= 1, notBefore < expiresAt else { throw InvalidRequest() }
    }
}

/// `POST /v1/installations/endpoint` (docs/protocol.md §4.4).
public struct RotateEndpointRequest: Sendable, Equatable {
    public let challengeID: Received<CanonicalUUID>
    public let challenge: Received<[UInt8]>
    public let installationHandle: Received<CanonicalUUID>
    public let endpointEpoch: Int64
    public let newEndpointEpoch: Int64
    public let endpoint: Received<[UInt8]>
    public let assertion: [UInt8]

    public init(body: [UInt8]) throws(InvalidRequest) {
        let fields = try RequestFields(
            body: body,
            names: [
                "v", "challenge_id", "challenge", "installation_handle", "endpoint_epoch", "new_endpoint_epoch",
                "endpoint", "assertion",
            ])
        challengeID = try fields.uuid("challenge_id")
        challenge = try fields.challenge("challenge")
        installationHandle = try fields.uuid("installation_handle")
        endpointEpoch = try fields.integer("endpoint_epoch")
        newEndpointEpoch = try fields.integer("new_endpoint_epoch")
        endpoint = try fields.endpoint("endpoint")
        assertion = try fields.base64("assertion", sizes: 1...1024).value
        try Self.checkSuccessor(endpointEpoch, newEndpointEpoch)
    }

    /// `new_endpoint_epoch == endpoint_epoch + 1` without overflow, epochs starting at 1.
    static func checkSuccessor(_ epoch: Int64, _ newEpoch: Int64) throws(InvalidRequest) {
        let (successor, overflow) = epoch.addingReportingOverflow(1)
        guard epoch >= 1, !overflow, newEpoch == successor else { throw InvalidRequest() }
    }
}

/// `POST /v1/delegations/revoke` (docs/protocol.md §4.5).
public struct RevokeDelegationRequest: Sendable, Equatable {
    public let challengeID: Received<CanonicalUUID>
    public let challenge: Received<[UInt8]>
    public let installationHandle: Received<CanonicalUUID>
    public let relayPublicKey: Received<XOnlyPublicKey>
    public let generation: Int64
    public let assertion: [UInt8]

    public init(body: [UInt8]) throws(InvalidRequest) {
        let fields = try RequestFields(
            body: body,
            names: [
                "v", "challenge_id", "challenge", "installation_handle", "relay_pubkey", "generation", "assertion",
            ])
        challengeID = try fields.uuid("challenge_id")
        challenge = try fields.challenge("challenge")
        installationHandle = try fields.uuid("installation_handle")
        relayPublicKey = try fields.relayPublicKey("relay_pubkey")
        generation = try fields.integer("generation")
        assertion = try fields.base64("assertion", sizes: 1...1024).value
        guard generation >= 1 else { throw InvalidRequest() }
    }
}

/// `POST /v1/installations/revoke` (docs/protocol.md §4.6).
public struct RevokeInstallationRequest: Sendable, Equatable {
    public let challengeID: Received<CanonicalUUID>
    public let challenge: Received<[UInt8]>
    public let installationHandle: Received<CanonicalUUID>
    public let endpointEpoch: Int64
    public let newEndpointEpoch: Int64
    public let assertion: [UInt8]

    public init(body: [UInt8]) throws(InvalidRequest) {
        let fields = try RequestFields(
            body: body,
            names: [
                "v", "challenge_id", "challenge", "installation_handle", "endpoint_epoch", "new_endpoint_epoch",
                "assertion",
            ])
        challengeID = try fields.uuid("challenge_id")
        challenge = try fields.challenge("challenge")
        installationHandle = try fields.uuid("installation_handle")
        endpointEpoch = try fields.integer("endpoint_epoch")
        newEndpointEpoch = try fields.integer("new_endpoint_epoch")
        assertion = try fields.base64("assertion", sizes: 1...1024).value
        try RotateEndpointRequest.checkSuccessor(endpointEpoch, newEndpointEpoch)
    }
}

/// `POST /v1/deliveries/apns` (docs/protocol.md §4.7). The grant stays opaque text here; opening it is
/// an authority check that answers 404, not a shape check.
public struct DeliveryRequest: Sendable, Equatable {
    public let endpointGrant: String
    public let requestID: CanonicalUUID
    public let expiresAt: Int64

    public init(body: [UInt8]) throws(InvalidRequest) {
        try self.init(fields: RequestFields(body: body, names: ["v"] + Self.itemNames))
    }

    /// One item of a batch (docs/protocol.md §4.8): exactly this body without `v`, under the same rules.
    init(item: JSONValue) throws(InvalidRequest) {
        try self.init(fields: RequestFields(nested: item, names: Self.itemNames))
    }

    private static let itemNames = ["endpoint_grant", "request_id", "expires_at"]

    private init(fields: RequestFields) throws(InvalidRequest) {
        endpointGrant = try fields.string("endpoint_grant")
        requestID = try fields.uuid("request_id").value
        expiresAt = try fields.unixTime("expires_at")
        guard endpointGrant.utf8.count <= EndpointGrant.maximumSealedLength else { throw InvalidRequest() }
    }
}

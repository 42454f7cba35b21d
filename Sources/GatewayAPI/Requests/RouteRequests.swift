import GatewayConfiguration
import GatewayCredentials
import PushJSON
import PushNostr

/// `POST /v1/installations/challenges` (docs/protocol.md §4.1): `{"v":1}`.
public struct ChallengeRequest: Sendable, Equatable {
    public init(body: [UInt8]) throws(APIError) {
        _ = try RequestFields(body: body, names: ["v"])
    }
}

/// The members both enrollment routes carry (docs/protocol.md §4.2, §4.2a); each route adds its
/// own attestation members.
public struct EnrollmentHead: Sendable, Equatable {
    public let challengeID: Received<CanonicalUUID>
    public let challenge: Received<[UInt8]>
    public let appProfile: String
    /// The endpoint as received; the profile's provider decides its format and bytes
    /// (docs/protocol.md §1).
    public let endpoint: String
    public let endpointEpoch: Int64
    public let expiresAt: Int64

    /// Parses a closed body of these members plus the route's own `names`.
    static func fields(body: [UInt8], names: [String]) throws(APIError) -> (EnrollmentHead, RequestFields) {
        let fields = try RequestFields(
            body: body,
            names: ["v", "challenge_id", "challenge", "app_profile", "endpoint", "endpoint_epoch", "expires_at"] + names
        )
        let head = EnrollmentHead(
            challengeID: try fields.uuid("challenge_id"), challenge: try fields.challenge("challenge"),
            appProfile: try fields.string("app_profile"), endpoint: try fields.endpoint("endpoint"),
            endpointEpoch: try fields.integer("endpoint_epoch"), expiresAt: try fields.unixTime("expires_at"))
        guard head.endpointEpoch == 1 else { throw APIError(.invalidRequest) }
        return (head, fields)
    }
}

/// `POST /v1/installations` (docs/protocol.md §4.2). Time and profile rules need the clock and the
/// configuration, so the handler checks them.
public struct EnrollRequest: Sendable, Equatable {
    public let head: EnrollmentHead
    public let keyID: Received<[UInt8]>
    public let attestation: [UInt8]

    public init(body: [UInt8]) throws(APIError) {
        let (head, fields) = try EnrollmentHead.fields(body: body, names: ["key_id", "attestation"])
        self.head = head
        keyID = try fields.base64("key_id", sizes: 32...32)
        attestation = try fields.base64("attestation", sizes: 1...16384).value
    }
}

/// `POST /v1/installations/android` (docs/protocol.md §4.2a): the Keystore chain, leaf first, instead
/// of a key id and an App Attest object, and an FCM registration token.
public struct AndroidEnrollRequest: Sendable, Equatable {
    /// docs/protocol.md §1: 2..10 certificates of 1..8192 bytes each.
    static let chainLengths = 2...10
    static let certificateSizes = 1...8192

    public let head: EnrollmentHead
    public let attestation: [[UInt8]]

    public init(body: [UInt8]) throws(APIError) {
        let (head, fields) = try EnrollmentHead.fields(body: body, names: ["attestation"])
        self.head = head
        attestation = try fields.base64Array(
            "attestation", counts: Self.chainLengths, sizes: Self.certificateSizes)
    }
}

/// The members every App Attest assertion route carries (docs/protocol.md §4.3–§4.6): the challenge,
/// the installation it speaks for and the assertion over the route's transcript.
public struct AssertionProof: Sendable, Equatable {
    public let challengeID: Received<CanonicalUUID>
    public let challenge: Received<[UInt8]>
    public let installationHandle: Received<CanonicalUUID>
    public let assertion: [UInt8]

    /// Parses a closed body of these members plus the route's own `names`.
    static func fields(body: [UInt8], names: [String]) throws(APIError) -> (AssertionProof, RequestFields) {
        let fields = try RequestFields(
            body: body, names: ["v", "challenge_id", "challenge", "installation_handle", "assertion"] + names)
        let proof = AssertionProof(
            challengeID: try fields.uuid("challenge_id"), challenge: try fields.challenge("challenge"),
            installationHandle: try fields.uuid("installation_handle"),
            assertion: try fields.base64("assertion", sizes: 1...1024).value)
        return (proof, fields)
    }
}

/// `POST /v1/delegations` (docs/protocol.md §4.3).
public struct DelegateRequest: Sendable, Equatable {
    public let proof: AssertionProof
    public let endpointEpoch: Int64
    public let generation: Int64
    public let relayPublicKey: Received<XOnlyPublicKey>
    public let notBefore: Int64
    public let expiresAt: Int64

    public init(body: [UInt8]) throws(APIError) {
        let (proof, fields) = try AssertionProof.fields(
            body: body, names: ["endpoint_epoch", "generation", "relay_pubkey", "not_before", "expires_at"])
        self.proof = proof
        endpointEpoch = try fields.integer("endpoint_epoch")
        generation = try fields.integer("generation")
        relayPublicKey = try fields.relayPublicKey("relay_pubkey")
        notBefore = try fields.unixTime("not_before")
        expiresAt = try fields.unixTime("expires_at")
        guard endpointEpoch >= 1, generation >= 1, notBefore < expiresAt else { throw APIError(.invalidRequest) }
    }
}

/// `POST /v1/installations/endpoint` (docs/protocol.md §4.4).
public struct RotateEndpointRequest: Sendable, Equatable {
    public let proof: AssertionProof
    public let endpointEpoch: Int64
    public let newEndpointEpoch: Int64
    /// The new token as received, in either platform's format: the installation's platform decides
    /// which one it must have (docs/protocol.md §1).
    public let endpoint: String

    public init(body: [UInt8]) throws(APIError) {
        let (proof, fields) = try AssertionProof.fields(
            body: body, names: ["endpoint_epoch", "new_endpoint_epoch", "endpoint"])
        self.proof = proof
        (endpointEpoch, newEndpointEpoch) = try Self.epochs(fields)
        endpoint = try fields.endpoint("endpoint")
    }

    /// `endpoint_epoch` and `new_endpoint_epoch` (§4.4, §4.6): the new one is the next, without
    /// overflow, epochs starting at 1.
    static func epochs(_ fields: RequestFields) throws(APIError) -> (Int64, Int64) {
        let epoch = try fields.integer("endpoint_epoch")
        let newEpoch = try fields.integer("new_endpoint_epoch")
        let (successor, overflow) = epoch.addingReportingOverflow(1)
        guard epoch >= 1, !overflow, newEpoch == successor else { throw APIError(.invalidRequest) }
        return (epoch, newEpoch)
    }
}

/// `POST /v1/delegations/revoke` (docs/protocol.md §4.5).
public struct RevokeDelegationRequest: Sendable, Equatable {
    public let proof: AssertionProof
    public let relayPublicKey: Received<XOnlyPublicKey>
    public let generation: Int64

    public init(body: [UInt8]) throws(APIError) {
        let (proof, fields) = try AssertionProof.fields(body: body, names: ["relay_pubkey", "generation"])
        self.proof = proof
        relayPublicKey = try fields.relayPublicKey("relay_pubkey")
        generation = try fields.integer("generation")
        guard generation >= 1 else { throw APIError(.invalidRequest) }
    }
}

/// `POST /v1/installations/revoke` (docs/protocol.md §4.6).
public struct RevokeInstallationRequest: Sendable, Equatable {
    public let proof: AssertionProof
    public let endpointEpoch: Int64
    public let newEndpointEpoch: Int64

    public init(body: [UInt8]) throws(APIError) {
        let (proof, fields) = try AssertionProof.fields(body: body, names: ["endpoint_epoch", "new_endpoint_epoch"])
        self.proof = proof
        (endpointEpoch, newEndpointEpoch) = try RotateEndpointRequest.epochs(fields)
    }
}

/// `POST /v1/deliveries/apns` (docs/protocol.md §4.7). The grant stays opaque text here; opening it is
/// an authority check that answers 404, not a shape check.
public struct DeliveryRequest: Sendable, Equatable {
    public let endpointGrant: String
    public let requestID: CanonicalUUID
    public let expiresAt: Int64

    public init(body: [UInt8]) throws(APIError) {
        try self.init(fields: RequestFields(body: body, names: ["v"] + Self.itemNames))
    }

    /// One item of a batch (docs/protocol.md §4.8): exactly this body without `v`, under the same rules.
    init(item: JSONValue) throws(APIError) {
        try self.init(fields: RequestFields(nested: item, names: Self.itemNames))
    }

    private static let itemNames = ["endpoint_grant", "request_id", "expires_at"]

    private init(fields: RequestFields) throws(APIError) {
        endpointGrant = try fields.string("endpoint_grant")
        requestID = try fields.uuid("request_id").value
        expiresAt = try fields.unixTime("expires_at")
        guard endpointGrant.utf8.count <= EndpointGrant.maximumSealedLength else { throw APIError(.invalidRequest) }
    }
}

import PushCrypto
import PushJSON

/// The delivery capability a delegation returns (docs/protocol.md §7): what the relay may wake, sealed so
/// the relay learns nothing from it. It names the delegation and the endpoint epoch, never the APNs
/// token.
public struct EndpointGrant: Sendable, Equatable {
    public static let maximumSealedLength = 4096

    public let delegationID: CanonicalUUID
    /// The relay's x-only public key, 32 bytes.
    public let relayPublicKey: [UInt8]
    public let appProfile: String
    public let endpointEpoch: Int64
    public let generation: Int64
    public let expiresAt: Int64

    public init(
        delegationID: CanonicalUUID, relayPublicKey: [UInt8], appProfile: String, endpointEpoch: Int64,
        generation: Int64, expiresAt: Int64
    ) {
        self.delegationID = delegationID
        self.relayPublicKey = relayPublicKey
        self.appProfile = appProfile
        self.endpointEpoch = endpointEpoch
        self.generation = generation
        self.expiresAt = expiresAt
    }

    private static let memberNames = [
        "v", "delegation_id", "relay_pubkey", "app_profile", "endpoint_epoch", "generation", "expires_at",
    ]

    /// The plaintext: compact JSON with the members in exactly the order of §7.
    public var plaintext: [UInt8] {
        var writer = JSONWriter(reservingCapacity: 200)
        writer.beginObject()
        writer.member("v", 1)
        writer.member("delegation_id", delegationID.text)
        writer.member("relay_pubkey", Hex.encode(relayPublicKey))
        writer.member("app_profile", appProfile)
        writer.member("endpoint_epoch", endpointEpoch)
        writer.member("generation", generation)
        writer.member("expires_at", expiresAt)
        writer.endObject()
        return writer.bytes
    }

    /// Seals the grant with the current grant key.
    public func sealed(with envelope: SealedEnvelope) throws(CredentialsError) -> String {
        try envelope.seal(plaintext)
    }

    /// Opens a presented grant; nil for anything that is not a grant this gateway sealed (too long,
    /// unknown key, tampered, or a plaintext that does not parse strictly).
    public static func open(_ sealed: String, with envelope: SealedEnvelope) -> EndpointGrant? {
        guard sealed.utf8.count <= maximumSealedLength, let plaintext = envelope.open(sealed) else { return nil }
        guard let value = try? JSONReader.parse(plaintext),
            let object = try? JSONObject.closed(value, keys: memberNames),
            (try? object.int64("v")) == 1,
            let delegationText = try? object.string("delegation_id"),
            let delegationID = CanonicalUUID(delegationText),
            let relayText = try? object.string("relay_pubkey"),
            let relayPublicKey = Hex.decode(relayText, lowercaseOnly: true), relayPublicKey.count == 32,
            let appProfile = try? object.string("app_profile"),
            let endpointEpoch = try? object.int64("endpoint_epoch"),
            let generation = try? object.int64("generation"),
            let expiresAt = try? object.int64("expires_at")
        else { return nil }
        return EndpointGrant(
            delegationID: delegationID, relayPublicKey: relayPublicKey, appProfile: appProfile,
            endpointEpoch: endpointEpoch, generation: generation, expiresAt: expiresAt)
    }
}

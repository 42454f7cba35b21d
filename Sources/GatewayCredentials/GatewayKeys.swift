import GatewayConfiguration

/// The gateway's keyed credentials (docs/protocol.md §4.1, §7), made once from the configured key
/// material: the lifecycle routes issue and check with them, the delivery pipeline opens what they
/// sealed, so both hold the same values.
package struct GatewayKeys: Sendable {
    package let challenges: ChallengeAuthority
    /// Seals endpoint grants (§4.3) and opens them for deliveries.
    package let grants: SealedEnvelope
    /// Token custody (§7): seals the endpoint token at enrollment and rotation, opens it to deliver.
    package let tokens: SealedEnvelope
    package let fingerprinter: EndpointFingerprinter

    package init(configuration: GatewayConfiguration) {
        challenges = ChallengeAuthority(keyring: Keyring(configuration.challengeKeys))
        grants = SealedEnvelope(purpose: .endpointGrant, keyring: Keyring(configuration.grantKeys))
        tokens = SealedEnvelope(purpose: .tokenCustody, keyring: Keyring(configuration.tokenKeys))
        fingerprinter = EndpointFingerprinter(key: configuration.fingerprintKey.bytes)
    }
}

extension Keyring {
    /// The keyring a configured keyring variable lists (docs/protocol.md §7, §12), in its order.
    package init(_ configured: ConfiguredKeyring) {
        self.init(keys: configured.keys.map { Key(id: $0.id, bytes: $0.bytes) })
    }
}

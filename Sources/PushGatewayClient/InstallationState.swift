import Foundation

/// Everything the client keeps between launches (docs/ios-integration.md "What your app keeps").
/// Worthless on another device: App Attest keys never leave this one.
public struct InstallationState: Codable, Sendable, Equatable {
    /// The App Attest key id (standard base64), once generated.
    public var keyID: String?
    /// True once `attestKey` succeeded with ``keyID``: Apple attests a key once, so an enrollment
    /// that did not complete after that needs a new key (docs/decisions/0203).
    public var keyAttested: Bool
    /// The enrolled installation.
    public var installation: Installation?
    /// Per relay public key.
    public var delegations: [String: RelayDelegation]
    /// A rotation sent and not yet answered: if its answer was lost (or the app was killed), it may
    /// have taken effect, so the next call finishes it first.
    public var pendingRotation: PendingRotation?

    public init() {
        keyID = nil
        keyAttested = false
        installation = nil
        delegations = [:]
        pendingRotation = nil
    }

    /// Relays whose grant no longer works because the epoch moved (or was never answered): delegate
    /// to each again and hand the new grants over.
    public var relaysToDelegateAgain: [String] {
        guard let installation else { return [] }
        return delegations.filter { $0.value.grant?.endpointEpoch != installation.endpointEpoch }.keys.sorted()
    }
}

/// One enrolled installation (docs/protocol.md §4.2).
public struct Installation: Codable, Sendable, Equatable {
    public var handle: String
    public var appProfile: String
    /// The device token as the gateway has it: lowercase hex.
    public var endpoint: String
    public var endpointEpoch: Int64
    /// Unix seconds; a grant may not outlive it.
    public var expiresAt: Int64
}

/// A rotation whose answer has not arrived.
public struct PendingRotation: Codable, Sendable, Equatable {
    public var fromEpoch: Int64
    public var endpoint: String
}

/// What the client knows about its delegation to one relay.
public struct RelayDelegation: Codable, Sendable, Equatable {
    /// The highest generation ever sent for this relay, saved before sending: the next delegation
    /// uses one more, so a generation is never reused (docs/protocol.md §4.3).
    public var lastSentGeneration: Int64
    /// The grant the gateway answered with; nil before the first answer, after a revocation and
    /// after a rotation.
    public var grant: Grant?
}

/// An endpoint grant and what it was issued for.
public struct Grant: Codable, Sendable, Equatable {
    /// The opaque `endpoint_grant` to hand to the relay.
    public var endpointGrant: String
    public var generation: Int64
    public var endpointEpoch: Int64
    public var notBefore: Int64
    public var expiresAt: Int64
}

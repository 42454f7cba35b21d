import PushAPNs

/// The production sender: one APNs HTTP/2 client for the process (its connection pools are keyed
/// by environment and credential, docs/protocol.md §8) and one `APNsProfile` per configured app profile.
public final class APNsDeliverySender: DeliverySender {
    /// A profile's APNs credentials could not be loaded; names the profile, never key material.
    public struct CredentialError: Error, CustomStringConvertible {
        public let profileID: String
        public var description: String { "profile \(profileID): the APNs .p8 key does not load as a P-256 private key" }
    }

    private let client: APNsClient
    private let profiles: [String: APNsProfile]

    /// Loads every profile's credentials now, so `serve` refuses to start with a key that cannot sign.
    public init(configuration: GatewayConfiguration) throws {
        var profiles: [String: APNsProfile] = [:]
        for profile in configuration.profiles {
            profiles[profile.id] = APNsProfile(
                server: Self.server(for: profile.apnsEnvironment, configuration: configuration),
                topic: profile.apnsTopic, credential: try Self.credential(for: profile),
                extraTrustAnchorsFile: configuration.apnsExtraTrustAnchorFile)
        }
        self.profiles = profiles
        var clientConfiguration = HTTP2ClientConfiguration()
        if let timeout = configuration.apnsRequestTimeout { clientConfiguration.requestTimeout = timeout }
        self.client = try APNsClient(configuration: clientConfiguration)
    }

    deinit { client.shutdown() }

    public func send(_ attempt: DeliveryAttempt) -> DeliveryOutcome {
        // Profiles come from the same configuration that admitted the attempt; a missing one means
        // the credentials are missing (§4.7 "missing credentials").
        guard let profile = profiles[attempt.profile.id] else { return .configurationFault }
        let notification = APNsNotification(
            deviceToken: attempt.deviceToken, requestID: attempt.requestID.text, expiresAt: attempt.expiresAt)
        switch client.send(notification, profile: profile).outcome {
        case .accepted: return .accepted
        case .invalidEndpoint(let invalidAt): return .invalidEndpoint(invalidAtSeconds: invalidAt)
        case .retry(let retryAfter): return .retry(retryAfterSeconds: retryAfter.map(Int64.init))
        case .configurationFault: return .configurationFault
        case .permanentRequestFault: return .permanentRequestFault
        }
    }

    /// Apple's host for the environment, unless a test/development override is configured (§12).
    private static func server(
        for environment: AppProfile.APNsEnvironment, configuration: GatewayConfiguration
    ) -> APNsServer {
        let override =
            switch environment {
            case .production: configuration.apnsProductionServer
            case .sandbox: configuration.apnsSandboxServer
            }
        if let override { return APNsServer(host: override.host, port: override.port) }
        return environment == .production ? .production : .sandbox
    }

    private static func credential(for profile: AppProfile) throws -> APNsProfile.Credential {
        switch profile.apnsAuthentication {
        case .token(let privateKeyPEM, let keyID, let teamID):
            do {
                return try .token(
                    teamID: teamID, keyID: keyID, privateKeyPEM: String(decoding: privateKeyPEM.bytes, as: UTF8.self))
            } catch {
                throw CredentialError(profileID: profile.id)
            }
        case .certificate(_, let path):
            // One PEM file holds the certificate and its unencrypted key (§12).
            return .certificate(certificateFile: path, keyFile: path)
        }
    }
}

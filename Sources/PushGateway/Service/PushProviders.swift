import PushAPNs
import PushDelivery
import PushHTTP2

/// The composition root's push providers: one per push service, keyed by every enabled profile
/// that sends through it (docs/protocol.md §8, §8a). The delivery pipeline, and later the Marmot
/// ingress, only see `[profile id: any PushProvider]`.
public enum PushProviders {
    /// A profile's APNs credentials could not be loaded; names the profile, never key material.
    public struct CredentialError: Error, CustomStringConvertible {
        public let profileID: String
        public var description: String { "profile \(profileID): the APNs .p8 key does not load as a P-256 private key" }
    }

    /// Loads every profile's credentials now, so `serve` refuses to start with a key that cannot
    /// sign. iOS profiles share one `APNsPushProvider`. Android profiles get none yet: their
    /// deliveries answer `configuration_fault` (missing credentials) until an FCM provider is built
    /// from `PUSH_GATEWAY_PROFILE_<P>_FCM_*` here, beside the APNs one.
    public static func make(configuration: GatewayConfiguration) throws -> [String: any PushProvider] {
        let iosProfiles = configuration.profiles.filter { $0.platform == .ios }
        guard !iosProfiles.isEmpty else { return [:] }
        var apnsProfiles: [String: APNsProfile] = [:]
        for profile in iosProfiles {
            apnsProfiles[profile.id] = APNsProfile(
                server: server(for: profile.apnsEnvironment, configuration: configuration),
                topic: profile.apnsTopic, credential: try credential(for: profile),
                extraTrustAnchorsFile: configuration.apnsExtraTrustAnchorFile)
        }
        var clientConfiguration = HTTP2ClientConfiguration()
        if let timeout = configuration.apnsRequestTimeout { clientConfiguration.requestTimeout = timeout }
        clientConfiguration.proxy = configuration.apnsProxy
        let apns = APNsPushProvider(client: try APNsClient(configuration: clientConfiguration), profiles: apnsProfiles)
        return Dictionary(uniqueKeysWithValues: iosProfiles.map { ($0.id, apns as any PushProvider) })
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

import GatewayConfiguration
import PushAPNs
import PushDelivery
import PushFCM
import PushHTTP2

/// The composition root's push providers: one per push service, keyed by every enabled profile
/// that sends through it (docs/protocol.md §8, §8a). The delivery pipeline, and later the Marmot
/// ingress, only see `[profile id: any PushProvider]`.
public enum PushProviders {
    /// Loads every profile's credentials now, so `serve` refuses to start with a key that cannot
    /// sign. iOS profiles share one `APNsPushProvider`, android profiles one `FCMPushProvider`.
    public static func make(configuration: GatewayConfiguration) throws(GatewayError) -> [String: any PushProvider] {
        var providers = try apns(configuration: configuration)
        if let fcm = try fcm(configuration: configuration) {
            for profile in configuration.profiles where profile.platform == .android { providers[profile.id] = fcm }
        }
        return providers
    }

    /// The FCM provider of every android profile (docs/protocol.md §8a), on the same HTTP/2 layer,
    /// timeout and egress proxy as APNs; nil without android profiles.
    public static func fcm(configuration: GatewayConfiguration) throws(GatewayError) -> FCMPushProvider? {
        let android = configuration.android
        var fcmProfiles: [String: FCMProfile] = [:]
        for profile in configuration.profiles where profile.platform == .android {
            guard let settings = profile.fcm else {
                throw GatewayError.pushCredentials(profileID: profile.id, problem: "no FCM project and service account")
            }
            let account: ServiceAccount
            do {
                account = try ServiceAccount.parse(settings.serviceAccountJSON.bytes)
            } catch {
                throw GatewayError.pushCredentials(
                    profileID: profile.id, problem: "the FCM service-account file does not load")
            }
            fcmProfiles[profile.id] = FCMProfile(
                projectID: settings.projectID, account: account,
                server: android.fcmServer.map { FCMServer(host: $0.host, port: $0.port) } ?? .production,
                tokenEndpoint: android.googleTokenEndpoint.map { FCMServer(host: $0.host, port: $0.port) }
                    ?? .googleTokenEndpoint,
                tokenPath: android.googleTokenEndpoint?.path ?? "/token",
                extraTrustAnchorsFile: android.fcmExtraTrustAnchorFile)
        }
        guard !fcmProfiles.isEmpty else { return nil }
        do {
            return try FCMPushProvider(profiles: fcmProfiles, configuration: clientConfiguration(configuration))
        } catch {
            throw GatewayError(.serviceStart, description: "the FCM client could not start: \(error)")
        }
    }

    private static func clientConfiguration(_ configuration: GatewayConfiguration) -> HTTP2ClientConfiguration {
        var clientConfiguration = HTTP2ClientConfiguration()
        if let timeout = configuration.apnsRequestTimeout { clientConfiguration.requestTimeout = timeout }
        clientConfiguration.proxy = configuration.apnsProxy
        return clientConfiguration
    }

    private static func apns(configuration: GatewayConfiguration) throws(GatewayError) -> [String: any PushProvider] {
        let iosProfiles = configuration.profiles.filter { $0.platform == .ios }
        guard !iosProfiles.isEmpty else { return [:] }
        var apnsProfiles: [String: APNsProfile] = [:]
        for profile in iosProfiles {
            apnsProfiles[profile.id] = APNsProfile(
                server: server(for: profile.apnsEnvironment, configuration: configuration),
                topic: profile.apnsTopic, credential: try credential(for: profile),
                extraTrustAnchorsFile: configuration.apnsExtraTrustAnchorFile)
        }
        let client: APNsClient
        do {
            client = try APNsClient(configuration: clientConfiguration(configuration))
        } catch {
            throw GatewayError(.serviceStart, description: "the APNs client could not start: \(error)")
        }
        let apns = APNsPushProvider(client: client, profiles: apnsProfiles)
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

    private static func credential(for profile: AppProfile) throws(GatewayError) -> APNsProfile.Credential {
        switch profile.apnsAuthentication {
        case .token(let privateKeyPEM, let keyID, let teamID):
            do {
                return try .token(
                    teamID: teamID, keyID: keyID, privateKeyPEM: String(decoding: privateKeyPEM.bytes, as: UTF8.self))
            } catch {
                throw GatewayError.pushCredentials(
                    profileID: profile.id, problem: "the APNs .p8 key does not load as a P-256 private key")
            }
        case .certificate(_, let path):
            // One PEM file holds the certificate and its unencrypted key (§12).
            return .certificate(certificateFile: path, keyFile: path)
        case nil:
            throw GatewayError.pushCredentials(profileID: profile.id, problem: "no APNs key or certificate")
        }
    }
}

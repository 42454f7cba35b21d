import Foundation
import GatewayConfiguration
import PushTestSupport
import Testing

@testable import PushGateway

/// The APNs and FCM modules parse their own settings from a profile's plain values
/// (docs/protocol.md §8, §8a, §12; docs/decisions/0865): files read, keys parsed, every refusal
/// naming its variable.
@Suite("the APNs and FCM modules' profile settings", .testBodyThreads)
struct ProviderProfileSettingsTests {
    static let iosKey = "PUSH_GATEWAY_PROFILE_BUZZ_IOS_PRODUCTION_"

    static func profile(
        _ environment: ConfigurationTestEnvironment, id: String = "buzz-ios-production"
    ) throws -> AppProfile {
        let configuration = try #require(environment.configuration())
        return try #require(configuration.profile(id: id))
    }

    @Test("a token profile's settings: the topic, the environment, the key id, the team id and the .p8 as read")
    func tokenSettings() throws {
        // The environment owns the key file's directory, so it outlives the parse.
        let environment = try ConfigurationTestEnvironment()
        let settings = try APNsProfileSettings(try Self.profile(environment))
        #expect(settings.topic == "xyz.buzz.app" && settings.environment == .production)
        guard case .token(let pem, let keyID, let teamID) = settings.authentication else {
            Issue.record("expected token auth")
            return
        }
        #expect(pem.bytes == Array(ConfigurationTestEnvironment.privateKeyPEM.utf8))
        #expect(keyID == "KEY1234567" && teamID == "ABCDE12345")
        #expect(settings.authentication.name == "token")
    }

    @Test("a certificate profile's settings hold the PEM as read, and printing or dumping them never shows it")
    func certificateSettings() throws {
        let environment = try ConfigurationTestEnvironment()
        let pem = ConfigurationTestEnvironment.certificatePEM + ConfigurationTestEnvironment.privateKeyPEM
        let path = try environment.write("cert.pem", pem)
        let certificate = environment.with(Self.iosKey + "APNS_KEY_FILE", nil).with(Self.iosKey + "APNS_KEY_ID", nil)
            .with(Self.iosKey + "APNS_TEAM_ID", nil).with(Self.iosKey + "APNS_CERT_FILE", path)
            .with(Self.iosKey + "APNS_ENVIRONMENT", "sandbox")
        let settings = try APNsProfileSettings(try Self.profile(certificate))
        #expect(settings.environment == .sandbox && settings.authentication.name == "certificate")
        guard case .certificate(let read, let readPath) = settings.authentication else {
            Issue.record("expected certificate auth")
            return
        }
        #expect(read.bytes == Array(pem.utf8) && readPath == path)
        var dumped = ""
        dump(settings, to: &dumped)
        for rendering in [dumped, String(reflecting: settings), "\(settings)"] {
            #expect(!rendering.contains("MIGTAgEAMBMGByqGSM49") && !rendering.contains("MIIBszCCAVmgAwIBAgIUQ"))
        }
    }

    @Test("a .p8 that is a PEM private key but not a P-256 one is the APNs module's problem, naming …_APNS_KEY_FILE")
    func nonP256Key() throws {
        let environment = try ConfigurationTestEnvironment()
        let notP256 = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n"
        let bad = environment.with(Self.iosKey + "APNS_KEY_FILE", try environment.write("bad.p8", notP256))
        let profile = try Self.profile(bad)
        #expect(
            APNsProfileSettings.problems(profile) == [
                ConfigurationError.Problem(
                    variable: Self.iosKey + "APNS_KEY_FILE",
                    problem: "does not hold an unencrypted P-256 private key (PKCS#8 .p8)")
            ])
        #expect(bad.errors().map(\.variable) == [Self.iosKey + "APNS_KEY_FILE"])
    }

    @Test("an fcm profile's settings: the project and the service account parsed from the file it names")
    func fcmSettings() throws {
        let environment = try ConfigurationTestEnvironment().withAndroidProfile(
            authority: try SyntheticKeyAttestationAuthority())
        let profile = try Self.profile(environment, id: ConfigurationTestEnvironment.androidProfile)
        let settings = try FCMProfileSettings(profile)
        #expect(settings.projectID == ConfigurationTestEnvironment.fcmProjectID)
        #expect(settings.account.clientEmail == ConfigurationTestEnvironment.serviceAccountEmail())
        #expect(FCMProfileSettings.problems(profile).isEmpty)
        // The module reads the file when it checks, not when the configuration parsed.
        let key = "PUSH_GATEWAY_PROFILE_BUZZ_ANDROID_FCM_SERVICE_ACCOUNT_FILE"
        try FileManager.default.removeItem(atPath: try #require(environment.variables[key]))
        #expect(
            FCMProfileSettings.problems(profile) == [
                ConfigurationError.Problem(variable: key, problem: "names a file that cannot be read")
            ])
    }
}

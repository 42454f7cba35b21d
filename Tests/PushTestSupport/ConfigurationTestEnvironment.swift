import Foundation
import GatewayConfiguration
import PushCrypto
import PushGateway

/// A minimum valid environment for `GatewayConfiguration` plus helpers to vary it; files live in
/// a fresh temporary directory per instance.
public struct ConfigurationTestEnvironment {
    /// Marker placed inside bad values: no error message may ever contain it.
    public static let marker = "Zq7SECRETVALUEx9"

    /// Distinct 32-byte keys: 0x11…, 0x22…, 0x33…, 0x44…, 0x55….
    public static func key(_ fill: UInt8) -> [UInt8] { [UInt8](repeating: fill, count: 32) }
    public static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// A real P-256 PKCS#8 key (serve and check-config load it), fresh for each test process.
    public static let privateKeyPEM = try! P256PrivateKey.generate().pkcs8PEM()
    public static let certificatePEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n-----END CERTIFICATE-----\n"

    /// Removes the directory when the last copy of the environment using it goes away.
    private final class TemporaryDirectory: Sendable {
        let url: URL

        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent(
                "push-gateway-config-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: url) }
    }

    private let temporaryDirectory: TemporaryDirectory
    public var directory: URL { temporaryDirectory.url }
    public var variables: [String: String]

    public init() throws {
        temporaryDirectory = try TemporaryDirectory()
        variables = [
            "DATABASE_URL": "postgresql://gateway:\(Self.marker)@db.internal/push",
            "PUSH_GATEWAY_ORIGIN": "https://push.buzz.xyz",
            "PUSH_GATEWAY_GRANT_KEYS": "g1:" + Self.base64(Self.key(0x11)),
            "PUSH_GATEWAY_TOKEN_KEYS": "t1:" + Self.base64(Self.key(0x22)),
            "PUSH_GATEWAY_CHALLENGE_KEYS": "c1:" + Self.base64(Self.key(0x33)),
            "PUSH_GATEWAY_FINGERPRINT_KEY": Self.base64(Self.key(0x44)),
            "PUSH_GATEWAY_PROFILES": "buzz-ios-production",
            "PUSH_GATEWAY_PROFILE_BUZZ_IOS_PRODUCTION_APP_ID": "ABCDE12345.xyz.buzz.app",
            "PUSH_GATEWAY_PROFILE_BUZZ_IOS_PRODUCTION_APNS_TOPIC": "xyz.buzz.app",
            "PUSH_GATEWAY_PROFILE_BUZZ_IOS_PRODUCTION_APNS_ENVIRONMENT": "production",
        ]
        variables["PUSH_GATEWAY_PROFILE_BUZZ_IOS_PRODUCTION_APNS_KEY_FILE"] = try write(
            "AuthKey.p8", Self.privateKeyPEM)
        variables["PUSH_GATEWAY_PROFILE_BUZZ_IOS_PRODUCTION_APNS_KEY_ID"] = "KEY1234567"
        variables["PUSH_GATEWAY_PROFILE_BUZZ_IOS_PRODUCTION_APNS_TEAM_ID"] = "ABCDE12345"
    }

    /// Writes `contents` to a file in the temporary directory and returns its path.
    public func write(_ name: String, _ contents: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(contents.utf8).write(to: url)
        return url.path
    }

    /// A path inside the temporary directory that does not exist.
    public var missingPath: String { directory.appendingPathComponent("missing-\(Self.marker)").path }

    public func parse() -> Result<GatewayConfiguration, ConfigurationError> {
        Result { () throws(ConfigurationError) in try GatewayConfiguration(environment: variables) }
    }

    /// The problems `check-config` names from the environment alone: the configuration's, or, once
    /// it parses, the provider modules' with their profiles' settings (docs/decisions/0865).
    public func errors() -> [ConfigurationError.Problem] {
        switch parse() {
        case .success(let configuration): return PushProviderModules.standard.problems(configuration)
        case .failure(let failure): return failure.problems
        }
    }

    /// A copy with `name` set to `value` (nil removes it).
    public func with(_ name: String, _ value: String?) -> ConfigurationTestEnvironment {
        var copy = self
        copy.variables[name] = value
        return copy
    }
}

import PushDelivery

/// One enabled app profile (docs/protocol.md §12 `PUSH_GATEWAY_PROFILE_<P>_*`): which app may enroll,
/// how its device proof is checked and which provider wakes its installations. An `ios` profile has
/// the App Attest members; an `android` profile has `android` instead, and its App Attest members
/// are empty (docs/decisions/0451). The provider's settings are plain values its module parses
/// and checks (`providerValues`, docs/decisions/0865).
public struct AppProfile: Sendable {
    /// docs/protocol.md §12 `PUSH_GATEWAY_PROFILE_<P>_PLATFORM`: which device proof and push service
    /// the profile's installations use.
    public enum Platform: String, Sendable, Equatable, CaseIterable {
        case ios, android

        /// docs/protocol.md §4.7, §4.8: the `/apns` delivery paths take grants of `ios` profiles only;
        /// the platform-neutral paths take any (`required` nil).
        public static func admits(_ platform: Platform, required: Platform?) -> Bool {
            required.map { $0 == platform } ?? true
        }
    }

    public enum AppAttestEnvironment: String, Sendable, Equatable, CaseIterable {
        case production, development
    }

    /// An Android profile's Key Attestation requirements (docs/protocol.md §5a steps 4–6).
    public struct Android: Sendable, Equatable {
        /// `…_ANDROID_PACKAGE`.
        public let packageName: String
        /// `…_ANDROID_SIGNING_CERT_SHA256`: 32-byte digests.
        public let signingCertificateDigests: [[UInt8]]
        /// `…_ANDROID_MIN_SECURITY_LEVEL`: `tee` (TrustedEnvironment) or `strongbox`.
        public let minimumSecurityLevel: MinimumSecurityLevel
        /// `…_ANDROID_VERIFIED_BOOT_KEYS`: 32-byte `verifiedBootKey` values accepted with a SelfSigned
        /// boot (docs/protocol.md §5a step 5); empty when unset (SelfSigned refused).
        public let verifiedBootKeys: [[UInt8]]

        public enum MinimumSecurityLevel: String, Sendable, Equatable, CaseIterable {
            case tee, strongbox
        }
    }

    /// The profile id as enabled in `PUSH_GATEWAY_PROFILES` and sent as `app_profile`.
    public let id: String
    /// `<P>` in the profile's variable names.
    public let variableKey: String
    public let platform: Platform
    /// `…_PROVIDER`: the push service its installations are woken through (docs/protocol.md
    /// "Platforms and providers"); a registered `PushProviderModule` serves it.
    public var provider: PushService
    /// The profile's `…_<PROVIDER>_*` variables as plain values, keyed by the suffix after
    /// `PUSH_GATEWAY_PROFILE_<P>_` (`FCM_PROJECT_ID`): what a provider module reads its settings
    /// from (docs/decisions/0770).
    public var providerValues: [String: String] = [:]
    /// `TEAMID.bundle.id`; its SHA-256 is the App Attest `rpIdHash` (docs/protocol.md §5). Empty for android.
    public let appID: String
    /// The 10-character team id prefix of `appID`. Empty for android.
    public let teamID: String
    public let appAttestEnvironment: AppAttestEnvironment
    /// The Key Attestation requirements; nil for ios.
    public var android: Android? = nil

    /// `PUSH_GATEWAY_PROFILE_<P>_<suffix>`: the name an error about one of the profile's settings gives.
    public func variable(_ suffix: String) -> String { "PUSH_GATEWAY_PROFILE_\(variableKey)_\(suffix)" }

    /// `providerValues` under their full variable names, for a provider module's reader.
    package var providerVariables: [String: String] {
        Dictionary(uniqueKeysWithValues: providerValues.map { (variable($0.key), $0.value) })
    }

    /// Profile ids: 1..64 of lowercase letters, digits, `-` and `_`, starting with a letter or
    /// digit (docs/decisions/0014).
    public static func isValidID(_ id: Substring) -> Bool {
        guard (1...64).contains(id.utf8.count), let first = id.utf8.first, isLowerAlphanumeric(first) else {
            return false
        }
        return id.utf8.allSatisfy { isLowerAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    /// `<P>`: the id upper-cased, every non-alphanumeric character as `_`.
    public static func variableKey(for id: Substring) -> String {
        String(
            decoding: id.utf8.map { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - 0x20
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): byte
                default: UInt8(ascii: "_")
                }
            }, as: UTF8.self)
    }

    /// Apple team ids and APNs key ids: exactly 10 upper-case letters or digits.
    package static func isAppleIdentifier(_ text: Substring) -> Bool {
        text.utf8.count == 10
            && text.utf8.allSatisfy {
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
            }
    }

    /// Bundle ids: dot-separated non-empty segments of ASCII letters, digits and `-`.
    static func isBundleID(_ text: Substring) -> Bool {
        !text.isEmpty
            && text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { segment in
                !segment.isEmpty && segment.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
            }
    }

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

extension AppProfile {
    /// An Android profile: no App Attest.
    init(id: String, variableKey: String, provider: PushService, android: Android) {
        self.init(
            id: id, variableKey: variableKey, platform: .android, provider: provider, appID: "", teamID: "",
            appAttestEnvironment: .production, android: android)
    }
}

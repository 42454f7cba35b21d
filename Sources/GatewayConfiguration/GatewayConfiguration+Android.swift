import PushCrypto
import PushDelivery
import PushKeyAttestation

extension GatewayConfiguration {
    /// The gateway-wide Android settings of docs/protocol.md §12: where the Key Attestation status
    /// list comes from (§5a step 3) and the test-only Key Attestation root and Google endpoints.
    public struct AndroidSettings: Sendable {
        /// Google's status list (docs/protocol.md §5a step 3).
        public static let googleStatusListURL = "https://android.googleapis.com/attestation/status"

        public enum StatusListSource: Sendable, Equatable {
            /// `PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_URL` (or its default).
            case url(String)
            /// `PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_FILE`.
            case file(String)
        }

        public let statusListSource: StatusListSource
        /// DER of `PUSH_GATEWAY_ANDROID_ATTESTATION_ROOT_CA_FILE`'s root, trusted beside the pinned
        /// Google roots (only with `PUSH_GATEWAY_ALLOW_UNTRUSTED_ANDROID_ROOT=true`).
        public let extraRootDER: [UInt8]?
        /// `PUSH_GATEWAY_FCM_URL`: another FCM server (test only).
        public let fcmServer: HTTPSEndpoint?
        /// `PUSH_GATEWAY_GOOGLE_TOKEN_URL`: another OAuth token endpoint (test only).
        public let googleTokenEndpoint: HTTPSEndpoint?
        /// `PUSH_GATEWAY_FCM_CA_FILE`: the trust anchor of those two (test only).
        public let fcmExtraTrustAnchorFile: String?

        static let defaults = AndroidSettings(
            statusListSource: .url(googleStatusListURL), extraRootDER: nil, fcmServer: nil, googleTokenEndpoint: nil,
            fcmExtraTrustAnchorFile: nil)
    }

    /// An `https://host[:port][/path]` test endpoint.
    public struct HTTPSEndpoint: Sendable, Equatable {
        public let host: String
        public let port: UInt16
        /// `/` when the URL has no path.
        public let path: String
    }

    /// The per-profile variables of each platform; setting one of the other platform's on a profile
    /// is a configuration error (docs/protocol.md §12).
    static let iosProfileVariableSuffixes = [
        "APP_ID", "APNS_TOPIC", "APNS_ENVIRONMENT", "APP_ATTEST_ENVIRONMENT", "APNS_KEY_FILE", "APNS_KEY_ID",
        "APNS_TEAM_ID", "APNS_CERT_FILE",
    ]
    static let androidProfileVariableSuffixes = [
        "ANDROID_PACKAGE", "ANDROID_SIGNING_CERT_SHA256", "ANDROID_MIN_SECURITY_LEVEL",
        "ANDROID_VERIFIED_BOOT_KEYS", withdrawnSelfSignedBootSuffix, "FCM_PROJECT_ID", "FCM_SERVICE_ACCOUNT_FILE",
    ]

    /// The built-in providers whose variable names this module knows (docs/decisions/0770, 0865),
    /// ios's default first, android's second, and each one's per-profile variable suffixes: on a
    /// profile of another provider they are a configuration error (docs/protocol.md §12); their
    /// values are their modules' to parse.
    static let builtInProviders = [PushService(rawValue: "apns"), PushService(rawValue: "fcm")]
    static let builtInProviderSuffixes = [
        iosProfileVariableSuffixes.filter { $0.hasPrefix("APNS_") },
        androidProfileVariableSuffixes.filter { $0.hasPrefix("FCM_") },
    ]

    /// Withdrawn: a state-only allowance let any relocked build in; its replacement pins the keys
    /// (docs/protocol.md §5a step 5, §12). Known, so that setting it gets an error naming the new variable.
    static let withdrawnSelfSignedBootSuffix = "ANDROID_ALLOW_SELF_SIGNED_BOOT"

    static let androidInsecureVariables = [
        "PUSH_GATEWAY_ANDROID_ATTESTATION_ROOT_CA_FILE", "PUSH_GATEWAY_ALLOW_UNTRUSTED_ANDROID_ROOT",
        "PUSH_GATEWAY_FCM_URL", "PUSH_GATEWAY_GOOGLE_TOKEN_URL", "PUSH_GATEWAY_FCM_CA_FILE",
    ]

    /// Every variable of the other platform set on the profile `key` is a problem.
    static func refuseOtherPlatformVariables(
        _ reader: inout EnvironmentReader, key: String, platform: AppProfile.Platform
    ) {
        let foreign = platform == .ios ? androidProfileVariableSuffixes : iosProfileVariableSuffixes
        for suffix in foreign {
            let name = "PUSH_GATEWAY_PROFILE_\(key)_\(suffix)"
            if reader.environment[name] != nil {
                reader.fail(
                    name, "is not a setting of an \(platform.rawValue) profile (PUSH_GATEWAY_PROFILE_\(key)_PLATFORM)")
            }
        }
    }

    /// An Android profile's variables (docs/protocol.md §12, §5a, §8a).
    static func androidProfile(
        _ reader: inout EnvironmentReader, id: String, key: String, provider: PushService
    ) -> AppProfile? {
        func variable(_ suffix: String) -> String { "PUSH_GATEWAY_PROFILE_\(key)_\(suffix)" }
        let packageName = variable("ANDROID_PACKAGE")
        let package = reader.required(packageName).flatMap { text in
            reader.parsed(
                packageName, text,
                "must be an Android package name (letters, digits and _ in two or more dot-separated parts)"
            ) { isAndroidPackageName($0) ? $0 : nil }
        }
        let digests = signingCertificateDigests(&reader, variable("ANDROID_SIGNING_CERT_SHA256"))
        let level: AppProfile.Android.MinimumSecurityLevel? = reader.choice(
            variable("ANDROID_MIN_SECURITY_LEVEL"), default: .tee)
        let bootKeysName = variable("ANDROID_VERIFIED_BOOT_KEYS")
        let bootKeys =
            reader.environment[bootKeysName] == nil
            ? [] : reader.required(bootKeysName).flatMap { hex32List(&reader, bootKeysName, $0, "a verifiedBootKey") }
        let withdrawnName = variable(withdrawnSelfSignedBootSuffix)
        if reader.environment[withdrawnName] != nil {
            reader.fail(
                withdrawnName,
                "is withdrawn: list the accepted verified boot keys (64 hex digits each) in \(bootKeysName) instead")
        }
        guard let package, let digests, let level, let bootKeys else { return nil }
        return AppProfile(
            id: id, variableKey: key, provider: provider,
            android: AppProfile.Android(
                packageName: package, signingCertificateDigests: digests, minimumSecurityLevel: level,
                verifiedBootKeys: bootKeys))
    }

    /// A comma list of 64-hex SHA-256 digests (either case, stored as bytes).
    private static func signingCertificateDigests(_ reader: inout EnvironmentReader, _ name: String) -> [[UInt8]]? {
        reader.required(name).flatMap { hex32List(&reader, name, $0, "a SHA-256 digest") }
    }

    /// A comma list of 32-byte values in hex (64 digits each, either case).
    private static func hex32List(
        _ reader: inout EnvironmentReader, _ name: String, _ text: String, _ what: String
    ) -> [[UInt8]]? {
        guard let items = reader.commaList(name, text) else { return nil }
        var values: [[UInt8]] = []
        for (index, item) in items.enumerated() {
            guard item.utf8.count == 64, let value = Hex.decode(String(item).lowercased(), lowercaseOnly: true) else {
                reader.fail(name, "item \(index + 1) must be 64 hex characters (\(what))")
                continue
            }
            values.append(value)
        }
        return values.count == items.count ? values : nil
    }

    /// The gateway-wide Android variables; checked whether or not an Android profile is enabled, so
    /// a mistake shows before the first Android profile does.
    static func androidSettings(_ reader: inout EnvironmentReader) -> AndroidSettings? {
        let urlName = "PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_URL"
        let fileName = "PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_FILE"
        var source: AndroidSettings.StatusListSource?
        switch (reader.optional(urlName), reader.optional(fileName)) {
        case (.some, .some):
            reader.fail(fileName, "and \(urlName) are both set; the status list comes from one of them")
        case (let url?, nil):
            if httpsEndpoint(url, allowsPath: true) != nil {
                source = .url(url)
            } else {
                reader.fail(urlName, "must be an https:// URL")
            }
        case (nil, let path?):
            do {
                _ = try KeyAttestationStatusList.read(fromFile: path, at: 0)
                source = .file(path)
            } catch {
                reader.fail(fileName, "names a status list that is \(error.description)")
            }
        case (nil, nil):
            if reader.environment[urlName] == nil && reader.environment[fileName] == nil {
                source = .url(AndroidSettings.googleStatusListURL)
            }
        }
        let root = extraAndroidRoot(&reader)
        let fcmServer = testEndpoint(&reader, "PUSH_GATEWAY_FCM_URL", allowsPath: false)
        let tokenEndpoint = testEndpoint(&reader, "PUSH_GATEWAY_GOOGLE_TOKEN_URL", allowsPath: true)
        let fcmCA = reader.pemFile(
            "PUSH_GATEWAY_FCM_CA_FILE", label: "CERTIFICATE", problem: "must hold a PEM certificate")
        // A refused root or endpoint is nil here and a problem in `reader`, which refuses the whole
        // configuration.
        guard let source else { return nil }
        return AndroidSettings(
            statusListSource: source, extraRootDER: root, fcmServer: fcmServer, googleTokenEndpoint: tokenEndpoint,
            fcmExtraTrustAnchorFile: fcmCA?.path)
    }

    /// `PUSH_GATEWAY_ANDROID_ATTESTATION_ROOT_CA_FILE`'s certificate, only with the explicit allow
    /// flag (§12); nil when unset or refused.
    private static func extraAndroidRoot(_ reader: inout EnvironmentReader) -> [UInt8]? {
        let rootName = "PUSH_GATEWAY_ANDROID_ATTESTATION_ROOT_CA_FILE"
        let allowName = "PUSH_GATEWAY_ALLOW_UNTRUSTED_ANDROID_ROOT"
        let allows = reader.allowFlag(allowName, onlyWith: rootName)
        guard reader.environment[rootName] != nil else { return nil }
        guard let file = reader.pemFile(rootName, label: "CERTIFICATE", problem: "must hold a PEM certificate") else {
            return nil
        }
        guard let certificates = PEMCertificates.decode(String(decoding: file.pem, as: UTF8.self)),
            certificates.count == 1,
            (try? KeyAttestationVerifier(trustedRoots: []).trusting(root: certificates[0])) != nil
        else {
            reader.fail(rootName, "must hold exactly one X.509 certificate")
            return nil
        }
        guard allows else {
            reader.fail(
                rootName, "is not one of the pinned Google roots; it is refused unless \(allowName)=true (tests only)")
            return nil
        }
        return certificates[0]
    }

    /// A test endpoint variable; nil when unset or invalid.
    private static func testEndpoint(
        _ reader: inout EnvironmentReader, _ name: String, allowsPath: Bool
    ) -> HTTPSEndpoint? {
        guard let text = reader.optional(name) else { return nil }
        guard let endpoint = httpsEndpoint(text, allowsPath: allowsPath) else {
            reader.fail(
                name, allowsPath ? "must be https://host[:port][/path]" : "must be https://host[:port] with no path")
            return nil
        }
        return endpoint
    }

    /// `https://host[:port]` followed, when `allowsPath`, by an optional path of visible ASCII
    /// without query or fragment.
    static func httpsEndpoint(_ text: String, allowsPath: Bool) -> HTTPSEndpoint? {
        let afterScheme = text.range(of: "://").map { text[$0.upperBound...] } ?? ""
        let slash = afterScheme.firstIndex(of: "/")
        let path = slash.map { String(afterScheme[$0...]) } ?? "/"
        let origin = slash.map { String(text[..<$0]) } ?? text
        guard allowsPath || slash == nil,
            path.utf8.allSatisfy({ (0x21...0x7e).contains($0) && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }),
            let parsed = OriginSyntax.parse(origin, schemes: ["https"])
        else { return nil }
        return HTTPSEndpoint(host: parsed.host, port: parsed.port ?? 443, path: path)
    }

    /// Android package names: two or more dot-separated parts, each a letter followed by letters,
    /// digits or `_`, 255 characters at most.
    static func isAndroidPackageName(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return text.utf8.count <= 255 && parts.count >= 2
            && parts.allSatisfy { part in
                guard let first = part.first, first.isASCII, first.isLetter else { return false }
                return part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            }
    }
}

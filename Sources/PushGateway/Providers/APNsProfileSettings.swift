import GatewayConfiguration
import PushCrypto

/// An `apns` profile's settings (docs/protocol.md §8, §12) from its `…_APNS_*` values: the topic,
/// the environment and exactly one authentication, its file read and its key parsed here
/// (docs/decisions/0865). `check-config`, `serve` and `send-test-push` refuse the same problems.
package struct APNsProfileSettings: ProviderProfileSettings {
    package enum Environment: String, Sendable, Equatable, CaseIterable {
        case production, sandbox
    }

    /// How the gateway authenticates to APNs for the profile.
    package enum Authentication: Sendable {
        /// Provider token (ES256 JWT) from the `.p8` PKCS#8 P-256 key (its PEM, checked to load).
        case token(privateKeyPEM: SecretBytes, keyID: String, teamID: String)
        /// A TLS client certificate and its unencrypted private key, both PEM in one file, which the
        /// TLS layer loads; `pem` as read at start-up (its expiry is checked, docs/protocol.md §12).
        case certificate(pem: SecretBytes, path: String)

        /// `token` or `certificate`, for `check-config` and `send-test-push`.
        package var name: String {
            switch self {
            case .token: "token"
            case .certificate: "certificate"
            }
        }
    }

    /// The bundle id, sent as `apns-topic`.
    package let topic: String
    package let environment: Environment
    package let authentication: Authentication

    package init(_ profile: AppProfile) throws(ProviderSettingsRefusal) {
        var reader = EnvironmentReader(profile.providerVariables)
        let topicName = profile.variable("APNS_TOPIC")
        let topic = reader.required(topicName)
        // `appID` is `TEAMID.bundle.id`, checked by the configuration.
        let bundleID = profile.appID.drop { $0 != "." }.dropFirst()
        if let topic, !topic.utf8.elementsEqual(bundleID.utf8) {
            reader.fail(
                topicName,
                "must equal the bundle id of \(profile.variable("APP_ID")) (the app id without its team prefix)")
        }
        let environment: Environment? = reader.choice(profile.variable("APNS_ENVIRONMENT"), default: nil)
        let authentication = Self.authentication(&reader, profile: profile)
        guard reader.problems.isEmpty, let topic, let environment, let authentication else {
            throw ProviderSettingsRefusal(reader.problems)
        }
        self.topic = topic
        self.environment = environment
        self.authentication = authentication
    }

    /// Token auth (key file, key id, team id: all three) or certificate auth, exactly one.
    private static func authentication(_ reader: inout EnvironmentReader, profile: AppProfile) -> Authentication? {
        let keyFileName = profile.variable("APNS_KEY_FILE")
        let keyIDName = profile.variable("APNS_KEY_ID")
        let teamIDName = profile.variable("APNS_TEAM_ID")
        let certificateName = profile.variable("APNS_CERT_FILE")
        let tokenNames = [keyFileName, keyIDName, teamIDName]
        let tokenSet = tokenNames.filter { reader.environment[$0] != nil }
        let certificateSet = reader.environment[certificateName] != nil
        if !tokenSet.isEmpty && certificateSet {
            reader.fail(
                certificateName,
                "and \(tokenSet.joined(separator: ", ")) are both set; choose token or certificate auth")
            return nil
        }
        if certificateSet {
            guard let path = reader.optional(certificateName),
                let pem = reader.fileContents(named: certificateName, path: path)
            else { return nil }
            guard PEMLabels.contains(pem, label: "CERTIFICATE"), PEMLabels.containsUnencryptedPrivateKey(pem) else {
                reader.fail(certificateName, "must hold a PEM certificate and an unencrypted PEM private key")
                return nil
            }
            return .certificate(pem: SecretBytes(pem), path: path)
        }
        if tokenSet.isEmpty {
            reader.fail(
                certificateName, "or \(keyFileName), \(keyIDName) and \(teamIDName) are required (one APNs auth)")
            return nil
        }
        for missing in tokenNames where !tokenSet.contains(missing) {
            reader.fail(missing, "is required with \(tokenSet.joined(separator: ", ")) (token auth needs all three)")
        }
        // The variables that are set are checked too, so one run reports every problem.
        var pem = reader.pemFile(
            keyFileName, label: "PRIVATE KEY", problem: "must hold the .p8 PEM private key (BEGIN PRIVATE KEY)")?.pem
        if let key = pem, (try? P256PrivateKey(pem: String(decoding: key, as: UTF8.self))) == nil {
            reader.fail(keyFileName, "does not hold an unencrypted P-256 private key (PKCS#8 .p8)")
            pem = nil
        }
        var keyID = reader.optional(keyIDName)
        if let id = keyID, !AppProfile.isAppleIdentifier(Substring(id)) {
            reader.fail(keyIDName, "must be the 10-character upper-case APNs key id")
            keyID = nil
        }
        var teamID = reader.optional(teamIDName)
        if let id = teamID, !AppProfile.isAppleIdentifier(Substring(id)) {
            reader.fail(teamIDName, "must be the 10-character upper-case team id")
            teamID = nil
        }
        guard let pem, let keyID, let teamID else { return nil }
        return .token(privateKeyPEM: SecretBytes(pem), keyID: keyID, teamID: teamID)
    }
}

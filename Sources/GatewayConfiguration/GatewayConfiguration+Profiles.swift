import PushDelivery

extension GatewayConfiguration {
    /// `PUSH_GATEWAY_PROFILES` and every enabled profile's `PUSH_GATEWAY_PROFILE_<P>_*` variables.
    static func profiles(_ reader: inout EnvironmentReader) -> [AppProfile]? {
        let name = "PUSH_GATEWAY_PROFILES"
        guard let text = reader.required(name), let items = reader.commaList(name, text) else { return nil }
        var profiles: [AppProfile] = []
        var keys: [String: Int] = [:]
        var providers: [String: PushService] = [:]
        var valid = true
        for (index, id) in items.enumerated() {
            guard AppProfile.isValidID(id) else {
                reader.fail(name, "item \(index + 1) must be 1..64 of a-z 0-9 - _, starting with a letter or digit")
                valid = false
                continue
            }
            let key = AppProfile.variableKey(for: id)
            if let earlier = keys[key] {
                reader.fail(
                    name,
                    "items \(earlier + 1) and \(index + 1) map to the same PUSH_GATEWAY_PROFILE_\(key)_* variables")
                valid = false
                continue
            }
            keys[key] = index
            if let profile = self.profile(&reader, id: String(id), key: key) {
                profiles.append(profile)
                providers[key] = profile.provider
            } else {
                valid = false
            }
        }
        unknownProfileVariables(&reader, keys: Array(keys.keys), providers: providers)
        return valid ? profiles : nil
    }

    private static func profile(_ reader: inout EnvironmentReader, id: String, key: String) -> AppProfile? {
        func variable(_ suffix: String) -> String { "PUSH_GATEWAY_PROFILE_\(key)_\(suffix)" }
        let platformName = variable("PLATFORM")
        guard let platform: AppProfile.Platform = reader.choice(platformName, default: .ios) else { return nil }
        refuseOtherPlatformVariables(&reader, key: key, platform: platform)
        guard let provider = provider(&reader, key: key, platform: platform) else { return nil }
        var profile =
            platform == .ios
            ? iosProfile(&reader, id: id, key: key, provider: provider)
            : androidProfile(&reader, id: id, key: key, provider: provider)
        profile?.providerValues = providerValues(reader, key: key, provider: provider)
        return profile
    }

    /// `…_PROVIDER` (docs/protocol.md §12): a lowercase name, `apns` for ios and `fcm` for android
    /// when unset. Which names exist is the registered modules' to say (`PushProviderModules`); the
    /// variables of the built-in providers other than this one are refused here.
    private static func provider(
        _ reader: inout EnvironmentReader, key: String, platform: AppProfile.Platform
    ) -> PushService? {
        let name = "PUSH_GATEWAY_PROFILE_\(key)_PROVIDER"
        var provider = platform == .ios ? builtInProviders[0] : builtInProviders[1]
        if reader.environment[name] != nil {
            guard let text = reader.required(name) else { return nil }
            guard (1...32).contains(text.utf8.count),
                text.utf8.allSatisfy({
                    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                })
            else {
                reader.fail(name, "must be a provider name (1..32 of a-z 0-9)")
                return nil
            }
            provider = PushService(rawValue: text)
        }
        for (index, builtIn) in builtInProviders.enumerated() where builtIn != provider {
            for suffix in builtInProviderSuffixes[index] {
                let foreign = "PUSH_GATEWAY_PROFILE_\(key)_\(suffix)"
                if reader.environment[foreign] != nil {
                    reader.fail(foreign, "is not a setting of a \(provider.rawValue) profile (\(name))")
                }
            }
        }
        if provider.rawValue != "webpush" {
            for suffix in webPushProfileVariableSuffixes {
                let foreign = "PUSH_GATEWAY_PROFILE_\(key)_\(suffix)"
                if reader.environment[foreign] != nil {
                    reader.fail(foreign, "is not a setting of a \(provider.rawValue) profile (\(name))")
                }
            }
        }
        return provider
    }

    /// The profile's `…_<PROVIDER>_*` variables as plain values, by suffix.
    private static func providerValues(
        _ reader: EnvironmentReader, key: String, provider: PushService
    ) -> [String: String] {
        let prefix = "PUSH_GATEWAY_PROFILE_\(key)_"
        let providerPrefix = provider.rawValue.uppercased() + "_"
        var values: [String: String] = [:]
        for (name, value) in reader.environment where name.hasPrefix(prefix + providerPrefix) {
            values[String(name.dropFirst(prefix.count))] = value
        }
        return values
    }

    /// An ios profile: App Attest's variables (docs/protocol.md §12); its provider's are its
    /// module's to parse (docs/decisions/0865).
    private static func iosProfile(
        _ reader: inout EnvironmentReader, id: String, key: String, provider: PushService
    ) -> AppProfile? {
        func variable(_ suffix: String) -> String { "PUSH_GATEWAY_PROFILE_\(key)_\(suffix)" }
        let appIDName = variable("APP_ID")
        var teamID: Substring?
        let appID = reader.required(appIDName)
        if let appID {
            let parts = appID.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 2, AppProfile.isAppleIdentifier(parts[0]), AppProfile.isBundleID(parts[1]) {
                teamID = parts[0]
            } else {
                reader.fail(appIDName, "must be TEAMID.bundle.id with a 10-character upper-case team id")
            }
        }
        let appAttestEnvironment: AppProfile.AppAttestEnvironment? = reader.choice(
            variable("APP_ATTEST_ENVIRONMENT"), default: .production)
        guard let appID, let teamID, let appAttestEnvironment else { return nil }
        return AppProfile(
            id: id, variableKey: key, platform: .ios, provider: provider, appID: appID, teamID: String(teamID),
            appAttestEnvironment: appAttestEnvironment)
    }

    /// A `PUSH_GATEWAY_PROFILE_<P>_…` variable of an enabled profile with a suffix no rule knows is
    /// most likely a typo that would silently leave a setting at its default, so it is an error.
    /// A remainder ending in a known suffix may belong to a profile whose `<P>` extends this one
    /// (`A` and `A_B`), and is left alone.
    /// A profile's own provider's `<PROVIDER>_*` variables are its module's to check, unless the
    /// provider is a built-in one, whose variable names this module knows.
    private static func unknownProfileVariables(
        _ reader: inout EnvironmentReader, keys: [String], providers: [String: PushService]
    ) {
        for name in reader.environment.keys.sorted() where name.hasPrefix("PUSH_GATEWAY_PROFILE_") {
            for key in keys {
                let prefix = "PUSH_GATEWAY_PROFILE_\(key)_"
                guard name.hasPrefix(prefix) else { continue }
                let remainder = name.dropFirst(prefix.count)
                // The built-in providers' variables are named in `profileVariableSuffixes`.
                let providerPrefix = providers[key].flatMap {
                    builtInProviders.contains($0) ? nil : $0.rawValue.uppercased() + "_"
                }
                let known =
                    profileVariableSuffixes.contains { suffix in
                        remainder == suffix || remainder.hasSuffix("_" + suffix)
                    } || providerPrefix.map { remainder.hasPrefix($0) } ?? false
                if !known {
                    reader.fail(name, "is not a profile variable (check its spelling)")
                    break
                }
            }
        }
    }

    /// The test/development-only variables and the list of those in use.
    static func testingOverrides(_ reader: inout EnvironmentReader) -> TestingOverrides? {
        var insecure = (insecureVariables + androidInsecureVariables + webPushInsecureVariables).filter {
            reader.environment[$0] != nil
        }
        // An allow flag set to false allows nothing.
        insecure.removeAll { $0.contains("_ALLOW_") && reader.environment[$0] == "false" }
        let production = apnsServer(&reader, "PUSH_GATEWAY_APNS_URL_PRODUCTION")
        let sandbox = apnsServer(&reader, "PUSH_GATEWAY_APNS_URL_SANDBOX")
        let ca = reader.pemFile(
            "PUSH_GATEWAY_APNS_CA_FILE", label: "CERTIFICATE", problem: "must hold a PEM certificate")
        let rootName = "PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE"
        let root = reader.pemFile(rootName, label: "CERTIFICATE", problem: "must hold a PEM certificate")
        // Only tests want an APNs timeout shorter than §8's 15 s (stalled streams in fault tests).
        let timeoutName = "PUSH_GATEWAY_APNS_REQUEST_TIMEOUT_MS"
        let timeout =
            reader.environment[timeoutName] == nil
            ? nil : reader.integer(timeoutName, in: 100...15_000, default: 15_000).map { Duration.milliseconds($0) }
        let allowName = "PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT"
        let allowsUntrusted = reader.allowFlag(allowName, onlyWith: rootName)
        return TestingOverrides(
            apnsProductionServer: production, apnsSandboxServer: sandbox, apnsExtraTrustAnchorPEM: ca?.pem,
            apnsExtraTrustAnchorFile: ca?.path, pushRequestTimeout: timeout, appAttestRootPEM: root?.pem,
            allowsUntrustedAppAttestRoot: allowsUntrusted, insecureSettings: insecure)
    }

    private static func apnsServer(_ reader: inout EnvironmentReader, _ name: String) -> APNsServer? {
        guard let text = reader.optional(name) else { return nil }
        guard let parsed = OriginSyntax.parse(text, schemes: ["https"], requiresPort: true), let port = parsed.port
        else {
            reader.fail(name, "must be https://host:port with no path")
            return nil
        }
        return APNsServer(host: parsed.host, port: port)
    }
}

/// Cheap shape checks on PEM files at configuration time; the PEM is parsed for real by the code
/// that uses it (TLS, JWT signing, App Attest).
package enum PEMLabels {
    package static func contains(_ pem: [UInt8], label: String) -> Bool {
        contains(pem, marker: "-----BEGIN \(label)-----")
    }

    /// A `PRIVATE KEY`, `EC PRIVATE KEY` or `RSA PRIVATE KEY` block, and no encryption marker.
    package static func containsUnencryptedPrivateKey(_ pem: [UInt8]) -> Bool {
        let hasKey = ["PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY"].contains { contains(pem, label: $0) }
        return hasKey && !contains(pem, label: "ENCRYPTED PRIVATE KEY")
            && !contains(pem, marker: "Proc-Type: 4,ENCRYPTED")
    }

    private static func contains(_ pem: [UInt8], marker: String) -> Bool {
        let needle = Array(marker.utf8)
        guard pem.count >= needle.count else { return false }
        return (0...(pem.count - needle.count)).contains { start in
            pem[start..<(start + needle.count)].elementsEqual(needle)
        }
    }
}

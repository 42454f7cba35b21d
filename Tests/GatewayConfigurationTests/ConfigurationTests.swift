import Foundation
import PushCrypto
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayConfiguration

@Suite("configuration from the environment (docs/protocol.md §12)", .testBodyThreads)
struct ConfigurationTests {
    typealias TestEnvironment = ConfigurationTestEnvironment
    private let profileVariable = "PUSH_GATEWAY_PROFILE_BUZZ_IOS_PRODUCTION_"

    /// Expects exactly the listed variables to be named by the errors, and no message to contain
    /// the marker (the value must never be echoed).
    private func expectErrors(
        _ environment: TestEnvironment, named expected: Set<String>, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let errors = environment.errors()
        #expect(Set(errors.map(\.variable)) == expected, "\(errors)", sourceLocation: sourceLocation)
        // No message may quote any value of the environment: the marker placed in bad values, nor
        // a key, path, URL or id (closed-set words such as "production" may appear in a hint).
        let closedSetWords: Set<String> = ["production", "sandbox", "development", "true", "false", "android"]
        let values = environment.variables.values.filter { $0.count >= 6 && !closedSetWords.contains($0) }
        for error in errors {
            #expect(!error.description.contains(TestEnvironment.marker), "\(error)", sourceLocation: sourceLocation)
            for value in values {
                #expect(!error.description.contains(value), "\(error) quotes a value", sourceLocation: sourceLocation)
            }
        }
    }

    // MARK: minimum environment and defaults

    @Test("a minimum environment parses with every documented default")
    func minimumEnvironment() throws {
        let environment = try TestEnvironment()
        let configuration = try #require(environment.configuration())
        #expect(configuration.databaseURL.value == "postgresql://gateway:\(TestEnvironment.marker)@db.internal/push")
        #expect(configuration.origin.text == "https://push.buzz.xyz")
        #expect(configuration.origin.audience(path: "/v1/delegations") == "https://push.buzz.xyz/v1/delegations")
        #expect(configuration.publicOrigins == nil)
        #expect(configuration.listen == ListenAddress("0.0.0.0:8080"))
        #expect(configuration.healthListen == ListenAddress("0.0.0.0:8081"))
        #expect(configuration.trustedProxies.networks.isEmpty)
        #expect(configuration.maxGrantLifetimeSeconds == 2_592_000)
        #expect(configuration.maxInstallationLifetimeSeconds == 7_776_000)
        #expect(configuration.endpointQuotaMax == 10)
        #expect(configuration.endpointQuotaWindowSeconds == 10)
        #expect(configuration.relayRatePerSecond == 2000)
        #expect(configuration.challengeRatePerMinute == 600)
        #expect(configuration.logLevel == .info)
        #expect(configuration.migrationsDirectory == nil)
        #expect(configuration.insecureSettings.isEmpty)
        #expect(configuration.apnsProductionServer == nil && configuration.apnsSandboxServer == nil)
        #expect(configuration.apnsExtraTrustAnchorPEM == nil && configuration.appAttestRootPEM == nil)
        #expect(!configuration.allowsUntrustedAppAttestRoot)
        #expect(configuration.grantKeys.keys[0].id == "g1")
        #expect(configuration.grantKeys.keys[0].bytes == TestEnvironment.key(0x11))
        #expect(configuration.tokenKeys.keys[0].bytes == TestEnvironment.key(0x22))
        #expect(configuration.challengeKeys.keys[0].bytes == TestEnvironment.key(0x33))
        #expect(configuration.fingerprintKey.bytes == TestEnvironment.key(0x44))
        let profile = try #require(configuration.profile(id: "buzz-ios-production"))
        #expect(profile.variableKey == "BUZZ_IOS_PRODUCTION")
        #expect(profile.appID == "ABCDE12345.xyz.buzz.app")
        #expect(profile.teamID == "ABCDE12345")
        #expect(profile.appAttestEnvironment == .production)
        // The provider's variables as plain values; the APNs module parses them (docs/decisions/0865).
        #expect(profile.provider.rawValue == "apns")
        let keyFile = try #require(environment.variables[profileVariable + "APNS_KEY_FILE"])
        #expect(
            profile.providerValues == [
                "APNS_TOPIC": "xyz.buzz.app", "APNS_ENVIRONMENT": "production", "APNS_KEY_ID": "KEY1234567",
                "APNS_TEAM_ID": "ABCDE12345", "APNS_KEY_FILE": keyFile,
            ])
        #expect(configuration.profile(id: "other") == nil)
    }

    @Test("an empty environment reports every required variable at once")
    func everyRequiredVariableMissing() throws {
        var environment = try TestEnvironment()
        environment.variables = [:]
        expectErrors(
            environment,
            named: [
                "DATABASE_URL", "PUSH_GATEWAY_ORIGIN", "PUSH_GATEWAY_GRANT_KEYS", "PUSH_GATEWAY_TOKEN_KEYS",
                "PUSH_GATEWAY_CHALLENGE_KEYS", "PUSH_GATEWAY_FINGERPRINT_KEY", "PUSH_GATEWAY_PROFILES",
            ])
    }

    @Test("errors in several variables are all reported together; a provider's settings once the rest parses")
    func collectsAllErrors() throws {
        let environment = try TestEnvironment()
            .with("PUSH_GATEWAY_ORIGIN", "http://\(TestEnvironment.marker)")
            .with("PUSH_GATEWAY_LISTEN", TestEnvironment.marker)
            .with("PUSH_GATEWAY_RELAY_RATE_PER_SECOND", "0")
            .with(profileVariable + "APP_ATTEST_ENVIRONMENT", TestEnvironment.marker)
        expectErrors(
            environment,
            named: [
                "PUSH_GATEWAY_ORIGIN", "PUSH_GATEWAY_LISTEN", "PUSH_GATEWAY_RELAY_RATE_PER_SECOND",
                profileVariable + "APP_ATTEST_ENVIRONMENT",
            ])
        // The APNs module reads its variables from a configuration that parsed (docs/decisions/0865).
        let apns = try TestEnvironment()
            .with(profileVariable + "APNS_ENVIRONMENT", TestEnvironment.marker)
            .with(profileVariable + "APNS_KEY_ID", TestEnvironment.marker)
        expectErrors(apns, named: [profileVariable + "APNS_ENVIRONMENT", profileVariable + "APNS_KEY_ID"])
        expectErrors(
            apns.with("PUSH_GATEWAY_LISTEN", TestEnvironment.marker), named: ["PUSH_GATEWAY_LISTEN"])
    }

    @Test("a variable set to the empty string is an error, not its default")
    func emptyValues() throws {
        for name in [
            "DATABASE_URL", "PUSH_GATEWAY_ORIGIN", "PUSH_GATEWAY_LISTEN", "PUSH_GATEWAY_TRUSTED_PROXIES",
            "PUSH_GATEWAY_PUBLIC_ORIGINS", "PUSH_GATEWAY_LOG_LEVEL", "PUSH_GATEWAY_ENDPOINT_QUOTA_MAX",
            "PUSH_GATEWAY_MIGRATIONS_DIR",
        ] {
            expectErrors(try TestEnvironment().with(name, ""), named: [name])
        }
    }

    // MARK: DATABASE_URL and the _FILE variants

    @Test("DATABASE_URL is taken as given, without content validation")
    func databaseURLAnyContent() throws {
        let configuration = try #require(
            try TestEnvironment().with("DATABASE_URL", "host=/run/pg dbname=x").configuration())
        #expect(configuration.databaseURL.value == "host=/run/pg dbname=x")
    }

    @Test("every secret variable can come from a _FILE with its trailing newline trimmed")
    func secretFiles() throws {
        var environment = try TestEnvironment()
        let secrets: [(String, String)] = [
            ("DATABASE_URL", "postgresql://from-file/db"),
            ("PUSH_GATEWAY_GRANT_KEYS", "gf:" + TestEnvironment.base64(TestEnvironment.key(0x61))),
            ("PUSH_GATEWAY_TOKEN_KEYS", "tf:" + TestEnvironment.base64(TestEnvironment.key(0x62))),
            ("PUSH_GATEWAY_CHALLENGE_KEYS", "cf:" + TestEnvironment.base64(TestEnvironment.key(0x63))),
            ("PUSH_GATEWAY_FINGERPRINT_KEY", TestEnvironment.base64(TestEnvironment.key(0x64))),
        ]
        for (index, (name, value)) in secrets.enumerated() {
            environment.variables[name] = nil
            let ending = index.isMultiple(of: 2) ? "\n" : "\r\n"
            environment.variables[name + "_FILE"] = try environment.write("\(name).secret", value + ending)
        }
        let configuration = try #require(environment.configuration())
        #expect(configuration.databaseURL.value == "postgresql://from-file/db")
        #expect(configuration.grantKeys.keys[0].id == "gf")
        #expect(configuration.grantKeys.keys[0].bytes == TestEnvironment.key(0x61))
        #expect(configuration.tokenKeys.keys[0].bytes == TestEnvironment.key(0x62))
        #expect(configuration.challengeKeys.keys[0].bytes == TestEnvironment.key(0x63))
        #expect(configuration.fingerprintKey.bytes == TestEnvironment.key(0x64))
    }

    @Test("a _FILE without a trailing newline is used as is, and only one newline is trimmed")
    func secretFileNewlines() throws {
        let environment = try TestEnvironment()
        let plain = environment.with("DATABASE_URL", nil)
            .with("DATABASE_URL_FILE", try environment.write("plain", "postgresql://plain/db"))
        #expect(plain.configuration()?.databaseURL.value == "postgresql://plain/db")
        let twoNewlines = environment.with("PUSH_GATEWAY_FINGERPRINT_KEY", nil)
            .with(
                "PUSH_GATEWAY_FINGERPRINT_KEY_FILE",
                try environment.write("two", TestEnvironment.base64(TestEnvironment.key(0x44)) + "\n\n"))
        expectErrors(twoNewlines, named: ["PUSH_GATEWAY_FINGERPRINT_KEY"])
    }

    @Test("setting a secret and its _FILE is an error for each of the five secrets")
    func secretBothSet() throws {
        let environment = try TestEnvironment()
        let path = try environment.write("both", "x")
        for name in [
            "DATABASE_URL", "PUSH_GATEWAY_GRANT_KEYS", "PUSH_GATEWAY_TOKEN_KEYS", "PUSH_GATEWAY_CHALLENGE_KEYS",
            "PUSH_GATEWAY_FINGERPRINT_KEY",
        ] {
            let both = environment.with(name + "_FILE", path)
            expectErrors(both, named: [name])
            #expect(both.errors().first?.problem.contains(name + "_FILE") == true)
        }
    }

    @Test("an unreadable or empty secret file is an error naming the _FILE variable")
    func secretFileUnreadable() throws {
        let environment = try TestEnvironment()
        expectErrors(
            environment.with("DATABASE_URL", nil).with("DATABASE_URL_FILE", environment.missingPath),
            named: ["DATABASE_URL_FILE"])
        expectErrors(
            environment.with("PUSH_GATEWAY_GRANT_KEYS", nil).with(
                "PUSH_GATEWAY_GRANT_KEYS_FILE", try environment.write("empty", "\n")),
            named: ["PUSH_GATEWAY_GRANT_KEYS_FILE"])
    }

    // MARK: origins

    @Test("PUSH_GATEWAY_ORIGIN accepts https://host[:port] and keeps it verbatim")
    func originAccepted() throws {
        for origin in [
            "https://push.buzz.xyz", "https://push.buzz.xyz:8443", "https://Push.Buzz.XYZ", "https://127.0.0.1",
            "https://[::1]:443", "https://localhost:65535", "https://a-b.c1",
        ] {
            let configuration = try TestEnvironment().with("PUSH_GATEWAY_ORIGIN", origin).configuration()
            #expect(configuration?.origin.text == origin)
        }
    }

    @Test("PUSH_GATEWAY_ORIGIN refuses other schemes, paths, queries, user info and bad hosts or ports")
    func originRefused() throws {
        let m = TestEnvironment.marker
        for origin in [
            "http://\(m).xyz", "HTTPS://\(m).xyz", "https://\(m).xyz/", "https://\(m).xyz/v1", "https://\(m).xyz?a=1",
            "https://\(m).xyz#f", "https://user@\(m).xyz", "https://\(m).xyz:0", "https://\(m).xyz:65536",
            "https://\(m).xyz:0443", "https://\(m).xyz:", "https://:8443", "\(m).xyz", "https://-\(m).xyz",
            "https://\(m)..xyz",
            "https://\(m)_x.xyz", "https://[::1\(m)]", "https://256.1.1.1", "https://\(m) .xyz", "https://\(m).xyz:44a",
        ] {
            expectErrors(try TestEnvironment().with("PUSH_GATEWAY_ORIGIN", origin), named: ["PUSH_GATEWAY_ORIGIN"])
        }
    }

    @Test("the egress proxy is read from PUSH_GATEWAY_EGRESS_PROXY or its older name, never from both")
    func egressProxyNames() throws {
        for name in ["PUSH_GATEWAY_EGRESS_PROXY", "PUSH_GATEWAY_APNS_PROXY"] {
            let configuration = try TestEnvironment().with(name, "http://127.0.0.1:3128").configuration()
            #expect(configuration?.egressProxy?.host == "127.0.0.1")
            #expect(configuration?.egressProxy?.port == 3128)
            expectErrors(try TestEnvironment().with(name, "https://127.0.0.1:3128"), named: [name])
        }
        #expect(try TestEnvironment().configuration()?.egressProxy == nil)
        let both = try TestEnvironment().with("PUSH_GATEWAY_EGRESS_PROXY", "http://127.0.0.1:3128")
            .with("PUSH_GATEWAY_APNS_PROXY", "http://127.0.0.1:3128")
        expectErrors(both, named: ["PUSH_GATEWAY_EGRESS_PROXY"])
    }

    @Test("PUSH_GATEWAY_PUBLIC_ORIGINS lists http or https origins, compared byte for byte")
    func publicOrigins() throws {
        let configuration = try #require(
            try TestEnvironment().with("PUSH_GATEWAY_PUBLIC_ORIGINS", "https://push.buzz.xyz,http://127.0.0.1:8080")
                .configuration())
        let origins = try #require(configuration.publicOrigins)
        #expect(origins.contains(scheme: "https", authority: "push.buzz.xyz"))
        #expect(origins.contains(scheme: "http", authority: "127.0.0.1:8080"))
        #expect(!origins.contains(scheme: "http", authority: "push.buzz.xyz"))
        #expect(!origins.contains(scheme: "https", authority: "PUSH.buzz.xyz"))
        #expect(!origins.contains(scheme: "https", authority: "push.buzz.xyz:443"))
    }

    @Test("PUSH_GATEWAY_PUBLIC_ORIGINS refuses paths, other schemes, empty items, spaces and repeats")
    func publicOriginsRefused() throws {
        let m = TestEnvironment.marker
        for list in [
            "https://\(m).xyz/", "ftp://\(m).xyz", "https://\(m).xyz,", ",https://\(m).xyz",
            "https://\(m).xyz, http://a",
            "https://\(m).xyz,https://\(m).xyz", "\(m)", "https://\(m).xyz/path",
        ] {
            expectErrors(
                try TestEnvironment().with("PUSH_GATEWAY_PUBLIC_ORIGINS", list), named: ["PUSH_GATEWAY_PUBLIC_ORIGINS"])
        }
    }

    // MARK: listeners and proxies

    @Test("listen addresses accept IPv4 and bracketed IPv6 literals with a port")
    func listenAccepted() throws {
        let configuration = try #require(
            try TestEnvironment().with("PUSH_GATEWAY_LISTEN", "[::]:9000").with(
                "PUSH_GATEWAY_HEALTH_LISTEN", "127.0.0.1:1"
            )
            .configuration())
        #expect(configuration.listen.address == [UInt8](repeating: 0, count: 16))
        #expect(configuration.listen.port == 9000)
        #expect(configuration.healthListen.address == [127, 0, 0, 1])
        #expect(configuration.healthListen.port == 1)
        #expect(configuration.listen.description == "[0:0:0:0:0:0:0:0]:9000")
        #expect(configuration.healthListen.description == "127.0.0.1:1")
    }

    @Test("listen addresses refuse host names, missing or out-of-range ports and malformed literals")
    func listenRefused() throws {
        let m = TestEnvironment.marker
        for value in [
            "\(m):8080", "localhost:8080", "0.0.0.0", "0.0.0.0:0", "0.0.0.0:65536", "256.0.0.1:80", "[::1:80", "::1:80",
            "01.2.3.4:80", "1.2.3:80", "[::1]", "[fe80::1%eth0]:80", "0.0.0.0:+80", "0.0.0.0:80\(m)",
        ] {
            for name in ["PUSH_GATEWAY_LISTEN", "PUSH_GATEWAY_HEALTH_LISTEN"] {
                expectErrors(try TestEnvironment().with(name, value), named: [name])
            }
        }
    }

    @Test("the public and private listeners must not collide")
    func listenersMustDiffer() throws {
        let environment = try TestEnvironment()
        let collisions: [(String, String)] = [
            ("0.0.0.0:8080", "0.0.0.0:8080"), ("0.0.0.0:9000", "127.0.0.1:9000"), ("127.0.0.1:9000", "0.0.0.0:9000"),
            ("[::]:9000", "127.0.0.1:9000"), ("[::1]:9000", "[0:0:0:0:0:0:0:1]:9000"),
        ]
        for (listen, health) in collisions {
            expectErrors(
                environment.with("PUSH_GATEWAY_LISTEN", listen).with("PUSH_GATEWAY_HEALTH_LISTEN", health),
                named: ["PUSH_GATEWAY_HEALTH_LISTEN"])
        }
        expectErrors(
            environment.with("PUSH_GATEWAY_HEALTH_LISTEN", "0.0.0.0:8080"), named: ["PUSH_GATEWAY_HEALTH_LISTEN"])
        #expect(
            environment.with("PUSH_GATEWAY_LISTEN", "10.0.0.1:9000").with(
                "PUSH_GATEWAY_HEALTH_LISTEN", "127.0.0.1:9000"
            )
            .errors().isEmpty)
    }

    @Test("trusted proxies parse into a matcher over address bytes")
    func trustedProxies() throws {
        let configuration = try #require(
            try TestEnvironment().with(
                "PUSH_GATEWAY_TRUSTED_PROXIES", "10.0.0.0/8,192.168.1.7,fd00::/8,::1/128,0.0.0.0/1"
            )
            .configuration())
        let proxies = configuration.trustedProxies
        #expect(proxies.networks.count == 5)
        let narrow = try #require(
            try TestEnvironment().with("PUSH_GATEWAY_TRUSTED_PROXIES", "10.1.0.0/16,192.168.1.7,fd00::/8,::1")
                .configuration()?.trustedProxies)
        #expect(narrow.contains([10, 1, 200, 3]))
        #expect(!narrow.contains([10, 2, 0, 1]))
        #expect(narrow.contains([192, 168, 1, 7]))
        #expect(!narrow.contains([192, 168, 1, 8]))
        #expect(narrow.contains([0xFD, 0x12] + [UInt8](repeating: 7, count: 14)))
        #expect(!narrow.contains([0xFE, 0x80] + [UInt8](repeating: 0, count: 14)))
        #expect(narrow.contains([UInt8](repeating: 0, count: 15) + [1]))
        #expect(!narrow.contains([UInt8](repeating: 0, count: 15) + [2]))
        // An IPv4 peer as a dual-stack socket reports it: ::ffff:10.1.2.3.
        #expect(narrow.contains([UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 10, 1, 2, 3]))
        #expect(!narrow.contains([UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 10, 2, 2, 3]))
        #expect(proxies.contains([8, 8, 8, 8]))
    }

    @Test("trusted proxies refuse malformed networks and host bits past the prefix")
    func trustedProxiesRefused() throws {
        let m = TestEnvironment.marker
        for list in [
            "10.0.0.1/8", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/08", "fd00::1/8", "::/129", "\(m)", "10.0.0.0/8,",
            "10.0.0.0/8, 10.1.0.0/16", "10.0.0.0/8/8", "10.0.0.0/8,10.0.0.0/8", "10.0.0.0/\(m)",
        ] {
            expectErrors(
                try TestEnvironment().with("PUSH_GATEWAY_TRUSTED_PROXIES", list),
                named: ["PUSH_GATEWAY_TRUSTED_PROXIES"])
        }
    }

    // MARK: keys

    @Test("a keyring keeps its order: the first key seals, every key opens")
    func keyringOrder() throws {
        let ring =
            "new:" + TestEnvironment.base64(TestEnvironment.key(0x71)) + ",old_1-A:"
            + TestEnvironment.base64(TestEnvironment.key(0x72)).replacingOccurrences(of: "=", with: "")
        let configuration = try #require(try TestEnvironment().with("PUSH_GATEWAY_GRANT_KEYS", ring).configuration())
        #expect(configuration.grantKeys.keys.map(\.id) == ["new", "old_1-A"])
        #expect(configuration.grantKeys.keys[0].bytes == TestEnvironment.key(0x71))
        #expect(configuration.grantKeys.keys[1].bytes == TestEnvironment.key(0x72))
    }

    @Test("keyrings refuse bad ids, bad base64, wrong key lengths and repeats, in every ring")
    func keyringRefused() throws {
        let m = TestEnvironment.marker
        let good = TestEnvironment.base64(TestEnvironment.key(0x71))
        let other = TestEnvironment.base64(TestEnvironment.key(0x72))
        let bad = [
            "\(m)", "\(m)!:\(good)", ":\(good)", String(repeating: "a", count: 33) + ":\(good)", "a:\(m)",
            "a:" + TestEnvironment.base64([UInt8](repeating: 1, count: 31)),
            "a:" + TestEnvironment.base64([UInt8](repeating: 1, count: 33)), "a:\(good),", "a:\(good),a:\(other)",
            "a:\(good),b:\(good)", "a:\(good) ", "a:" + good.replacingOccurrences(of: "+", with: "-") + "\(m)",
            // Non-zero unused trailing bits: the last character before "=" must encode zero low bits.
            "a:" + String(good.dropLast(2)) + "R=",
        ]
        for name in ["PUSH_GATEWAY_GRANT_KEYS", "PUSH_GATEWAY_TOKEN_KEYS", "PUSH_GATEWAY_CHALLENGE_KEYS"] {
            for ring in bad {
                expectErrors(try TestEnvironment().with(name, ring), named: [name])
            }
        }
        // The same key spelt canonically, padded and unpadded, decodes; "R" differs from "E" only in unused bits.
        #expect(good.hasSuffix("E="))
        #expect(Base64.decode(good) == TestEnvironment.key(0x71))
        #expect(Base64.decode(String(good.dropLast())) == TestEnvironment.key(0x71))
        #expect(Base64.decode(String(good.dropLast(2)) + "R=") == nil)
    }

    @Test("a 32-character key id is accepted")
    func keyIDMaximumLength() throws {
        let ring = String(repeating: "Z", count: 32) + ":" + TestEnvironment.base64(TestEnvironment.key(0x71))
        #expect(try TestEnvironment().with("PUSH_GATEWAY_GRANT_KEYS", ring).errors().isEmpty)
    }

    @Test("grant and token keyrings must not share key ids")
    func grantTokenSharedID() throws {
        let environment = try TestEnvironment()
            .with("PUSH_GATEWAY_TOKEN_KEYS", "g1:" + TestEnvironment.base64(TestEnvironment.key(0x72)))
        expectErrors(environment, named: ["PUSH_GATEWAY_TOKEN_KEYS"])
    }

    @Test("no two of the key variables may hold the same key bytes")
    func sharedKeyBytes() throws {
        let grantKey = TestEnvironment.base64(TestEnvironment.key(0x11))
        let environment = try TestEnvironment()
        expectErrors(
            environment.with(
                "PUSH_GATEWAY_TOKEN_KEYS", "t1:" + TestEnvironment.base64(TestEnvironment.key(0x22)) + ",t0:\(grantKey)"
            ),
            named: ["PUSH_GATEWAY_TOKEN_KEYS"])
        expectErrors(
            environment.with("PUSH_GATEWAY_CHALLENGE_KEYS", "c1:\(grantKey)"), named: ["PUSH_GATEWAY_CHALLENGE_KEYS"])
        expectErrors(
            environment.with("PUSH_GATEWAY_FINGERPRINT_KEY", grantKey), named: ["PUSH_GATEWAY_FINGERPRINT_KEY"])
        expectErrors(
            environment.with("PUSH_GATEWAY_FINGERPRINT_KEY", TestEnvironment.base64(TestEnvironment.key(0x33))),
            named: ["PUSH_GATEWAY_FINGERPRINT_KEY"])
    }

    @Test("the challenge keyring may reuse an id of another ring (its ids never leave the gateway)")
    func challengeIDMayRepeat() throws {
        let environment = try TestEnvironment()
            .with("PUSH_GATEWAY_CHALLENGE_KEYS", "g1:" + TestEnvironment.base64(TestEnvironment.key(0x33)))
        #expect(environment.errors().isEmpty)
    }

    @Test("the fingerprint key must be base64 of exactly 32 bytes")
    func fingerprintKey() throws {
        let m = TestEnvironment.marker
        for value in [
            m, TestEnvironment.base64([UInt8](repeating: 9, count: 31)),
            "k1:" + TestEnvironment.base64(TestEnvironment.key(0x44)),
        ] {
            expectErrors(
                try TestEnvironment().with("PUSH_GATEWAY_FINGERPRINT_KEY", value),
                named: ["PUSH_GATEWAY_FINGERPRINT_KEY"])
        }
    }

    // MARK: numbers

    @Test("numeric settings accept their range boundaries")
    func numericBoundaries() throws {
        let limits: [(String, Int64, Int64, KeyPath<GatewayConfiguration, Int64>)] = [
            ("PUSH_GATEWAY_MAX_GRANT_LIFETIME_SECONDS", 1, 31_536_000, \.maxGrantLifetimeSeconds),
            ("PUSH_GATEWAY_MAX_INSTALLATION_LIFETIME_SECONDS", 1, 31_536_000, \.maxInstallationLifetimeSeconds),
            ("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", 1, 1_000_000, \.endpointQuotaMax),
            ("PUSH_GATEWAY_ENDPOINT_QUOTA_WINDOW_SECONDS", 1, 86_400, \.endpointQuotaWindowSeconds),
            ("PUSH_GATEWAY_RELAY_RATE_PER_SECOND", 1, 1_000_000, \.relayRatePerSecond),
            ("PUSH_GATEWAY_CHALLENGE_RATE_PER_MINUTE", 1, 1_000_000, \.challengeRatePerMinute),
            ("PUSH_GATEWAY_LIFECYCLE_RATE_PER_MINUTE", 1, 1_000_000, \.lifecycleRatePerMinute),
        ]
        for (name, minimum, maximum, keyPath) in limits {
            for value in [minimum, maximum] {
                let configuration = try TestEnvironment().with(name, String(value)).configuration()
                #expect(configuration?[keyPath: keyPath] == value, "\(name)")
            }
            for value in [minimum - 1, maximum + 1] {
                expectErrors(try TestEnvironment().with(name, String(value)), named: [name])
            }
            for text in [
                "+5", " 5", "5 ", "-1", "1e3", "5s", "0x10", "99999999999999999999999", "\(TestEnvironment.marker)",
            ] {
                expectErrors(try TestEnvironment().with(name, text), named: [name])
            }
        }
    }

    // MARK: profiles

    @Test("several profiles are enabled in order, each with its own variables")
    func severalProfiles() throws {
        var environment = try TestEnvironment()
        environment.variables["PUSH_GATEWAY_PROFILES"] = "buzz-ios-production,buzz_ios.sandbox2"
            .replacingOccurrences(of: ".", with: "-")
        let sandbox = "PUSH_GATEWAY_PROFILE_BUZZ_IOS_SANDBOX2_"
        environment.variables[sandbox + "APP_ID"] = "ZYXWV98765.xyz.buzz.app-dev"
        environment.variables[sandbox + "APNS_TOPIC"] = "xyz.buzz.app-dev"
        environment.variables[sandbox + "APNS_ENVIRONMENT"] = "sandbox"
        environment.variables[sandbox + "APP_ATTEST_ENVIRONMENT"] = "development"
        environment.variables[sandbox + "APNS_CERT_FILE"] = try environment.write(
            "cert.pem", TestEnvironment.certificatePEM + TestEnvironment.privateKeyPEM)
        let configuration = try #require(environment.configuration())
        #expect(configuration.profiles.map(\.id) == ["buzz-ios-production", "buzz_ios-sandbox2"])
        let profile = try #require(configuration.profile(id: "buzz_ios-sandbox2"))
        #expect(profile.variableKey == "BUZZ_IOS_SANDBOX2")
        #expect(profile.providerValues["APNS_ENVIRONMENT"] == "sandbox")
        #expect(profile.appAttestEnvironment == .development)
        #expect(profile.providerValues["APNS_CERT_FILE"] == environment.variables[sandbox + "APNS_CERT_FILE"])
        #expect(environment.errors().isEmpty)
    }

    @Test("a profile's PLATFORM is ios unset or set, or android; other values are refused")
    func profilePlatform() throws {
        let platform = profileVariable + "PLATFORM"
        let unset = try #require(try TestEnvironment().configuration())
        #expect(unset.profile(id: "buzz-ios-production")?.platform == .ios)
        let ios = try #require(try TestEnvironment().with(platform, "ios").configuration())
        #expect(ios.profile(id: "buzz-ios-production")?.platform == .ios)
        for value in ["IOS", "fcm", " ios", ""] {
            expectErrors(try TestEnvironment().with(platform, value), named: [platform])
        }
    }

    @Test("an android profile: its six variables with their defaults, and the test root as an insecure setting")
    func androidProfile() throws {
        let authority = try SyntheticKeyAttestationAuthority()
        let environment = try TestEnvironment().withAndroidProfile(authority: authority)
        let configuration = try #require(try environment.configuration())
        let profile = try #require(configuration.profile(id: TestEnvironment.androidProfile))
        #expect(profile.platform == .android)
        #expect(profile.appID.isEmpty && profile.provider.rawValue == "fcm")
        let android = try #require(profile.android)
        #expect(android.packageName == TestEnvironment.androidPackage)
        #expect(android.signingCertificateDigests == [TestEnvironment.androidSigningDigest])
        #expect(android.minimumSecurityLevel == .tee && android.verifiedBootKeys.isEmpty)
        #expect(profile.providerValues["FCM_PROJECT_ID"] == TestEnvironment.fcmProjectID)
        #expect(environment.errors().isEmpty)
        #expect(configuration.profile(id: "buzz-ios-production")?.android == nil)
        #expect(configuration.android.extraRootDER == authority.root.derEncoded)
        #expect(
            configuration.insecureSettings == [
                "PUSH_GATEWAY_ANDROID_ATTESTATION_ROOT_CA_FILE", "PUSH_GATEWAY_ALLOW_UNTRUSTED_ANDROID_ROOT",
            ])

        let key = "PUSH_GATEWAY_PROFILE_BUZZ_ANDROID_"
        let strict = try #require(
            try environment.with(key + "ANDROID_MIN_SECURITY_LEVEL", "strongbox")
                .with(
                    key + "ANDROID_VERIFIED_BOOT_KEYS",
                    Hex.encode([UInt8](repeating: 0xC4, count: 32)).uppercased() + ","
                        + Hex.encode([UInt8](repeating: 0x5a, count: 32))
                )
                .with(
                    key + "ANDROID_SIGNING_CERT_SHA256",
                    Hex.encode([UInt8](repeating: 0xAB, count: 32)).uppercased()
                        + "," + Hex.encode([UInt8](repeating: 0x01, count: 32))
                )
                .configuration()?.profile(id: TestEnvironment.androidProfile)?.android)
        #expect(strict.minimumSecurityLevel == .strongbox)
        #expect(strict.verifiedBootKeys == [[UInt8](repeating: 0xC4, count: 32), [UInt8](repeating: 0x5a, count: 32)])
        #expect(strict.signingCertificateDigests.count == 2)

        // Without the test root: Google's URL by default, no insecure setting.
        let plain = try #require(
            try environment.with("PUSH_GATEWAY_ANDROID_ATTESTATION_ROOT_CA_FILE", nil)
                .with("PUSH_GATEWAY_ALLOW_UNTRUSTED_ANDROID_ROOT", nil)
                .with("PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_FILE", nil).configuration())
        #expect(plain.android.statusListSource == .url("https://android.googleapis.com/attestation/status"))
        #expect(plain.insecureSettings.isEmpty && plain.android.extraRootDER == nil)
    }

    @Test("an android profile refuses each bad or missing variable by name, and the other platform's variables")
    func androidProfileRefused() throws {
        let m = TestEnvironment.marker
        let environment = try TestEnvironment().withAndroidProfile(authority: try SyntheticKeyAttestationAuthority())
        let key = "PUSH_GATEWAY_PROFILE_BUZZ_ANDROID_"
        for suffix in ["ANDROID_PACKAGE", "ANDROID_SIGNING_CERT_SHA256", "FCM_PROJECT_ID", "FCM_SERVICE_ACCOUNT_FILE"] {
            expectErrors(environment.with(key + suffix, nil), named: [key + suffix])
        }
        let bad: [(String, String)] = [
            ("ANDROID_PACKAGE", m), ("ANDROID_PACKAGE", "xyz"), ("ANDROID_PACKAGE", "xyz.1app"),
            ("ANDROID_SIGNING_CERT_SHA256", m), ("ANDROID_SIGNING_CERT_SHA256", String(repeating: "a", count: 63)),
            ("ANDROID_MIN_SECURITY_LEVEL", "software"), ("ANDROID_VERIFIED_BOOT_KEYS", m),
            ("ANDROID_VERIFIED_BOOT_KEYS", ""), ("ANDROID_VERIFIED_BOOT_KEYS", String(repeating: "b", count: 63)),
            ("ANDROID_VERIFIED_BOOT_KEYS", String(repeating: "b", count: 64) + ","),
            (
                "ANDROID_VERIFIED_BOOT_KEYS",
                String(repeating: "c", count: 64) + ",x" + String(repeating: "c", count: 63)
            ),
            ("FCM_PROJECT_ID", "Buzz-\(m)"), ("FCM_PROJECT_ID", "abc"),
            ("FCM_SERVICE_ACCOUNT_FILE", environment.missingPath),
            ("FCM_SERVICE_ACCOUNT_FILE", try environment.write("account-\(m).json", #"{"type":"\#(m)"}"#)),
        ]
        for (suffix, value) in bad {
            expectErrors(environment.with(key + suffix, value), named: [key + suffix])
        }
        // The other platform's variables, both ways.
        expectErrors(environment.with(key + "APNS_TOPIC", "xyz.buzz.app"), named: [key + "APNS_TOPIC"])
        expectErrors(
            environment.with(profileVariable + "FCM_PROJECT_ID", "buzz-wake-1"),
            named: [profileVariable + "FCM_PROJECT_ID"])
        // An ios profile switched to android names its APNs variables and the missing android ones;
        // the FCM module names its own once the profile parses (docs/decisions/0865).
        let switched = try TestEnvironment().with(profileVariable + "PLATFORM", "android")
        expectErrors(
            switched,
            named: Set(
                (["APP_ID", "APNS_TOPIC", "APNS_ENVIRONMENT", "APNS_KEY_FILE", "APNS_KEY_ID", "APNS_TEAM_ID"]
                    + ["ANDROID_PACKAGE", "ANDROID_SIGNING_CERT_SHA256"])
                    .map { profileVariable + $0 }))
    }

    @Test(
        "the withdrawn …_ANDROID_ALLOW_SELF_SIGNED_BOOT is a configuration error, whatever its value, naming …_ANDROID_VERIFIED_BOOT_KEYS"
    )
    func withdrawnSelfSignedBoot() throws {
        let environment = try TestEnvironment().withAndroidProfile(authority: try SyntheticKeyAttestationAuthority())
        let key = "PUSH_GATEWAY_PROFILE_BUZZ_ANDROID_"
        for value in ["true", "false", ""] {
            let withdrawn = environment.with(key + "ANDROID_ALLOW_SELF_SIGNED_BOOT", value)
            expectErrors(withdrawn, named: [key + "ANDROID_ALLOW_SELF_SIGNED_BOOT"])
            #expect(
                withdrawn.errors().allSatisfy { $0.description.contains(key + "ANDROID_VERIFIED_BOOT_KEYS") },
                "\(withdrawn.errors())")
        }
        // Beside the new variable it is still refused.
        expectErrors(
            environment.with(key + "ANDROID_VERIFIED_BOOT_KEYS", String(repeating: "ab", count: 32))
                .with(key + "ANDROID_ALLOW_SELF_SIGNED_BOOT", "true"),
            named: [key + "ANDROID_ALLOW_SELF_SIGNED_BOOT"])
    }

    @Test("the gateway-wide Android variables: one status source, a root only with the allow flag, https test URLs")
    func androidGlobalsRefused() throws {
        let m = TestEnvironment.marker
        let environment = try TestEnvironment().withAndroidProfile(authority: try SyntheticKeyAttestationAuthority())
        let file = "PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_FILE"
        let url = "PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_URL"
        let root = "PUSH_GATEWAY_ANDROID_ATTESTATION_ROOT_CA_FILE"
        let allow = "PUSH_GATEWAY_ALLOW_UNTRUSTED_ANDROID_ROOT"
        expectErrors(environment.with(url, "https://mirror.example/status"), named: [file])
        expectErrors(environment.with(file, nil).with(url, "http://\(m).example/status"), named: [url])
        expectErrors(environment.with(file, environment.missingPath), named: [file])
        expectErrors(environment.with(file, try environment.write("status-\(m).json", #"{"\#(m)":1}"#)), named: [file])
        expectErrors(environment.with(allow, nil), named: [root])
        expectErrors(environment.with(allow, "false"), named: [root])
        expectErrors(environment.with(allow, "yes"), named: [allow, root])
        expectErrors(environment.with(root, nil), named: [allow])
        expectErrors(
            environment.with(root, try environment.write("root-\(m).pem", TestEnvironment.certificatePEM)),
            named: [root])
        for (name, value) in [
            ("PUSH_GATEWAY_FCM_URL", "https://127.0.0.1:9443/v1"), ("PUSH_GATEWAY_FCM_URL", "http://127.0.0.1:9443"),
            ("PUSH_GATEWAY_GOOGLE_TOKEN_URL", "https://\(m) /token"),
            ("PUSH_GATEWAY_FCM_CA_FILE", environment.missingPath),
        ] {
            expectErrors(environment.with(name, value), named: [name])
        }
        let overrides = try #require(
            try environment.with("PUSH_GATEWAY_FCM_URL", "https://127.0.0.1:9443")
                .with("PUSH_GATEWAY_GOOGLE_TOKEN_URL", "https://127.0.0.1:9444/oauth/token").configuration())
        #expect(overrides.android.fcmServer == .init(host: "127.0.0.1", port: 9443, path: "/"))
        #expect(overrides.android.googleTokenEndpoint == .init(host: "127.0.0.1", port: 9444, path: "/oauth/token"))
        #expect(overrides.insecureSettings.contains("PUSH_GATEWAY_FCM_URL"))
        #expect(overrides.insecureSettings.contains("PUSH_GATEWAY_GOOGLE_TOKEN_URL"))
    }

    @Test("PUSH_GATEWAY_PROFILES refuses bad ids, empty items, repeats and ids that share variable names")
    func profileListRefused() throws {
        let m = TestEnvironment.marker
        for list in [
            m, "buzz-ios-production,", "buzz-ios-production,buzz-ios-production", "-\(m)", "\(m.lowercased()).x",
            String(repeating: "a", count: 65), "buzz-ios-production, other", "buzz-ios-production,buzz_ios_production",
        ] {
            expectErrors(try TestEnvironment().with("PUSH_GATEWAY_PROFILES", list), named: ["PUSH_GATEWAY_PROFILES"])
        }
    }

    @Test("the app id must be TEAMID.bundle.id and the topic its bundle id")
    func appIDAndTopic() throws {
        let m = TestEnvironment.marker
        for appID in [
            "abcde12345.xyz.buzz.app", "ABCDE1234.xyz.buzz.app", "ABCDE12345", "ABCDE12345.", "ABCDE12345.xyz..app",
            "ABCDE12345.\(m)_x", "ABCDE12345.xyz buzz",
        ] {
            expectErrors(
                try TestEnvironment().with(profileVariable + "APP_ID", appID), named: [profileVariable + "APP_ID"])
        }
        for topic in ["ABCDE12345.xyz.buzz.app", "xyz.buzz", "xyz.buzz.app.\(m)", "XYZ.buzz.app"] {
            expectErrors(
                try TestEnvironment().with(profileVariable + "APNS_TOPIC", topic),
                named: [profileVariable + "APNS_TOPIC"])
        }
        expectErrors(
            try TestEnvironment().with(profileVariable + "APNS_TOPIC", nil), named: [profileVariable + "APNS_TOPIC"])
        expectErrors(try TestEnvironment().with(profileVariable + "APP_ID", nil), named: [profileVariable + "APP_ID"])
    }

    @Test("APNs and App Attest environments are closed sets; App Attest defaults to production")
    func environments() throws {
        for value in ["Production", "development", TestEnvironment.marker] {
            expectErrors(
                try TestEnvironment().with(profileVariable + "APNS_ENVIRONMENT", value),
                named: [profileVariable + "APNS_ENVIRONMENT"])
        }
        expectErrors(
            try TestEnvironment().with(profileVariable + "APNS_ENVIRONMENT", nil),
            named: [profileVariable + "APNS_ENVIRONMENT"])
        for value in ["sandbox", "Production", TestEnvironment.marker] {
            expectErrors(
                try TestEnvironment().with(profileVariable + "APP_ATTEST_ENVIRONMENT", value),
                named: [profileVariable + "APP_ATTEST_ENVIRONMENT"])
        }
        let development = try TestEnvironment().with(profileVariable + "APP_ATTEST_ENVIRONMENT", "development")
        #expect(development.configuration()?.profiles.first?.appAttestEnvironment == .development)
        #expect(try TestEnvironment().with(profileVariable + "APNS_ENVIRONMENT", "sandbox").errors().isEmpty)
    }

    @Test("token auth needs key file, key id and team id together; each missing one is named")
    func tokenAuthPartial() throws {
        for missing in ["APNS_KEY_FILE", "APNS_KEY_ID", "APNS_TEAM_ID"] {
            expectErrors(try TestEnvironment().with(profileVariable + missing, nil), named: [profileVariable + missing])
        }
        var none = try TestEnvironment()
        for suffix in ["APNS_KEY_FILE", "APNS_KEY_ID", "APNS_TEAM_ID"] {
            none.variables[profileVariable + suffix] = nil
        }
        expectErrors(none, named: [profileVariable + "APNS_CERT_FILE"])
        var keyIDOnly = none
        keyIDOnly.variables[profileVariable + "APNS_KEY_ID"] = TestEnvironment.marker
        expectErrors(
            keyIDOnly,
            named: [
                profileVariable + "APNS_KEY_FILE", profileVariable + "APNS_TEAM_ID", profileVariable + "APNS_KEY_ID",
            ])
    }

    @Test("token and certificate auth together is an error")
    func bothAuthentications() throws {
        let environment = try TestEnvironment()
        let both = environment.with(
            profileVariable + "APNS_CERT_FILE",
            try environment.write("cert.pem", TestEnvironment.certificatePEM + TestEnvironment.privateKeyPEM))
        expectErrors(both, named: [profileVariable + "APNS_CERT_FILE"])
        var certificateAndKeyID = both
        certificateAndKeyID.variables[profileVariable + "APNS_KEY_FILE"] = nil
        certificateAndKeyID.variables[profileVariable + "APNS_TEAM_ID"] = nil
        expectErrors(certificateAndKeyID, named: [profileVariable + "APNS_CERT_FILE"])
    }

    @Test("token auth values and files are checked")
    func tokenAuthValues() throws {
        let m = TestEnvironment.marker
        let environment = try TestEnvironment()
        for keyID in ["KEY123456", "key1234567", "KEY12345678", "\(m)"] {
            expectErrors(
                environment.with(profileVariable + "APNS_KEY_ID", keyID), named: [profileVariable + "APNS_KEY_ID"])
        }
        for teamID in ["ABCDE1234", "abcde12345", "\(m)"] {
            expectErrors(
                environment.with(profileVariable + "APNS_TEAM_ID", teamID), named: [profileVariable + "APNS_TEAM_ID"])
        }
        expectErrors(
            environment.with(profileVariable + "APNS_KEY_FILE", environment.missingPath),
            named: [profileVariable + "APNS_KEY_FILE"])
        expectErrors(
            environment.with(profileVariable + "APNS_KEY_FILE", environment.directory.path),
            named: [profileVariable + "APNS_KEY_FILE"])
        expectErrors(
            environment.with(profileVariable + "APNS_KEY_FILE", try environment.write("empty.p8", "")),
            named: [profileVariable + "APNS_KEY_FILE"])
        expectErrors(
            environment.with(
                profileVariable + "APNS_KEY_FILE",
                try environment.write("cert-only.p8", TestEnvironment.certificatePEM + m)),
            named: [profileVariable + "APNS_KEY_FILE"])
    }

    @Test("certificate auth needs a certificate and an unencrypted private key in a readable file")
    func certificateAuthValues() throws {
        var environment = try TestEnvironment()
        for suffix in ["APNS_KEY_FILE", "APNS_KEY_ID", "APNS_TEAM_ID"] {
            environment.variables[profileVariable + suffix] = nil
        }
        let name = profileVariable + "APNS_CERT_FILE"
        let m = TestEnvironment.marker
        let encrypted = "-----BEGIN ENCRYPTED PRIVATE KEY-----\n\(m)\n-----END ENCRYPTED PRIVATE KEY-----\n"
        let legacyEncrypted =
            "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\(m)\n-----END EC PRIVATE KEY-----\n"
        for contents in [
            TestEnvironment.certificatePEM, TestEnvironment.privateKeyPEM, TestEnvironment.certificatePEM + encrypted,
            TestEnvironment.certificatePEM + legacyEncrypted, m,
        ] {
            expectErrors(
                environment.with(name, try environment.write("c-\(UUID().uuidString).pem", contents)), named: [name])
        }
        expectErrors(environment.with(name, environment.missingPath), named: [name])
        let ecKey = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n"
        #expect(
            environment.with(name, try environment.write("ok.pem", ecKey + TestEnvironment.certificatePEM)).errors()
                .isEmpty)
    }

    @Test("a misspelt variable of an enabled profile is an error; other profiles' variables are ignored")
    func unknownProfileVariables() throws {
        let environment = try TestEnvironment()
        expectErrors(environment.with(profileVariable + "APNS_KEYID", "x"), named: [profileVariable + "APNS_KEYID"])
        expectErrors(environment.with(profileVariable + "TOPIC", "x"), named: [profileVariable + "TOPIC"])
        #expect(environment.with("PUSH_GATEWAY_PROFILE_DISABLED_APNS_KEYID", "x").errors().isEmpty)
        #expect(environment.with(profileVariable + "EXTRA_APP_ID", "x").errors().isEmpty)
    }

    // MARK: log level, migrations, test-only settings

    @Test("PUSH_GATEWAY_LOG_LEVEL takes the four level names exactly")
    func logLevel() throws {
        for level in LogLevel.allCases {
            #expect(try TestEnvironment().with("PUSH_GATEWAY_LOG_LEVEL", level.name).configuration()?.logLevel == level)
        }
        for value in ["INFO", "warn", "verbose", TestEnvironment.marker] {
            expectErrors(try TestEnvironment().with("PUSH_GATEWAY_LOG_LEVEL", value), named: ["PUSH_GATEWAY_LOG_LEVEL"])
        }
    }

    @Test("PUSH_GATEWAY_MIGRATIONS_DIR is passed through")
    func migrationsDirectory() throws {
        let configuration = try TestEnvironment().with("PUSH_GATEWAY_MIGRATIONS_DIR", "/opt/migrations").configuration()
        #expect(configuration?.migrationsDirectory == "/opt/migrations")
    }

    @Test("test APNs servers, trust anchor and App Attest root are read and listed as insecure")
    func insecureSettings() throws {
        let environment = try TestEnvironment()
        let ca = try environment.write("ca.pem", TestEnvironment.certificatePEM)
        let configuration = try #require(
            environment.with("PUSH_GATEWAY_APNS_URL_PRODUCTION", "https://127.0.0.1:8443")
                .with("PUSH_GATEWAY_APNS_URL_SANDBOX", "https://[::1]:9443")
                .with("PUSH_GATEWAY_APNS_CA_FILE", ca).with("PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE", ca)
                .with("PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT", "true").configuration())
        #expect(configuration.apnsProductionServer == GatewayConfiguration.APNsServer(host: "127.0.0.1", port: 8443))
        #expect(configuration.apnsSandboxServer == GatewayConfiguration.APNsServer(host: "[::1]", port: 9443))
        #expect(configuration.apnsExtraTrustAnchorPEM == Array(TestEnvironment.certificatePEM.utf8))
        #expect(configuration.appAttestRootPEM == Array(TestEnvironment.certificatePEM.utf8))
        #expect(configuration.allowsUntrustedAppAttestRoot)
        #expect(
            configuration.insecureSettings == [
                "PUSH_GATEWAY_APNS_URL_PRODUCTION", "PUSH_GATEWAY_APNS_URL_SANDBOX", "PUSH_GATEWAY_APNS_CA_FILE",
                "PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE", "PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT",
            ])
        let rootOnly = try #require(
            environment.with("PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE", ca)
                .with("PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT", "false").configuration())
        #expect(rootOnly.insecureSettings == ["PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE"])
        #expect(!rootOnly.allowsUntrustedAppAttestRoot)
    }

    @Test("test-only settings refuse malformed values")
    func insecureSettingsRefused() throws {
        let m = TestEnvironment.marker
        let environment = try TestEnvironment()
        for name in ["PUSH_GATEWAY_APNS_URL_PRODUCTION", "PUSH_GATEWAY_APNS_URL_SANDBOX"] {
            for url in [
                "https://\(m).local", "http://\(m).local:8443", "https://\(m).local:8443/",
                "https://\(m):8443/3/device",
            ] {
                expectErrors(environment.with(name, url), named: [name])
            }
        }
        for name in ["PUSH_GATEWAY_APNS_CA_FILE", "PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE"] {
            expectErrors(environment.with(name, environment.missingPath), named: [name])
            expectErrors(environment.with(name, try environment.write("not-pem", m)), named: [name])
        }
        let ca = try environment.write("root.pem", TestEnvironment.certificatePEM)
        for flag in ["TRUE", "1", "yes", m] {
            expectErrors(
                environment.with("PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE", ca).with(
                    "PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT", flag),
                named: ["PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT"])
        }
        expectErrors(
            environment.with("PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT", "true"),
            named: ["PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT"])
    }

    // MARK: secrets never printed

    @Test("printing, debug-printing or dumping a configuration never shows secrets")
    func descriptionsRedact() throws {
        let environment = try TestEnvironment()
        let certificatePath = try environment.write(
            "c.pem", TestEnvironment.certificatePEM + TestEnvironment.privateKeyPEM)
        var variables = environment
        variables.variables["PUSH_GATEWAY_PROFILES"] = "buzz-ios-production,cert"
        variables.variables["PUSH_GATEWAY_PROFILE_CERT_APP_ID"] = "ABCDE12345.xyz.cert"
        variables.variables["PUSH_GATEWAY_PROFILE_CERT_APNS_TOPIC"] = "xyz.cert"
        variables.variables["PUSH_GATEWAY_PROFILE_CERT_APNS_ENVIRONMENT"] = "sandbox"
        variables.variables["PUSH_GATEWAY_PROFILE_CERT_APNS_CERT_FILE"] = certificatePath
        let configuration = try #require(variables.configuration())
        var dumped = ""
        dump(configuration, to: &dumped)
        let renderings = [
            String(describing: configuration), String(reflecting: configuration), "\(configuration)", dumped,
            "\(configuration.grantKeys)", String(reflecting: configuration.grantKeys.keys[0]),
            "\(configuration.fingerprintKey)", "\(configuration.databaseURL)",
        ]
        var forbidden = [TestEnvironment.marker, "MIGTAgEAMBMGByqGSM49", "postgresql://", "db.internal"]
        for fill: UInt8 in [0x11, 0x22, 0x33, 0x44] {
            let key = TestEnvironment.key(fill)
            forbidden.append(TestEnvironment.base64(key))
            forbidden.append(key.prefix(4).map(String.init).joined(separator: ", "))
        }
        for rendering in renderings {
            #expect(rendering.contains("redacted"))
            for secret in forbidden {
                #expect(!rendering.contains(secret), "\(secret) printed")
            }
        }
        // The profiles hold plain values only: file paths, never what the files hold (docs/decisions/0865).
        for secret in forbidden + ["MIIBszCCAVmgAwIBAgIUQ"] {
            #expect(!"\(configuration.profiles)".contains(secret), "\(secret) printed")
        }
        #expect(String(describing: configuration).contains("https://push.buzz.xyz"))
    }
}

import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import PushGateway
@testable import PushGatewayCommands

@Suite("push-gateway check-config", .testBodyThreads)
struct CheckConfigCommandTests {
    @Test("a valid environment prints configuration ok, the profiles and no insecure settings, and exits 0")
    func valid() throws {
        let environment = try ConfigurationTestEnvironment()
        let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(result.exitCode == 0)
        #expect(result.standardError.isEmpty)
        #expect(
            result.standardOutput == """
                configuration ok
                profile buzz-ios-production: apns production, app attest production, token auth
                capacity: 16 database sessions, 32 workers
                insecure settings: none

                """)
    }

    @Test("insecure settings in use are listed by name only")
    func insecureListed() throws {
        let environment = try ConfigurationTestEnvironment()
            .with("PUSH_GATEWAY_APNS_URL_SANDBOX", "https://127.0.0.1:8443")
        let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(result.exitCode == 0)
        #expect(result.standardOutput.hasSuffix("insecure settings: PUSH_GATEWAY_APNS_URL_SANDBOX\n"))
        #expect(!result.standardOutput.contains("127.0.0.1"))
    }

    @Test("an invalid environment prints every error on stderr without values and exits 1")
    func invalid() throws {
        let marker = ConfigurationTestEnvironment.marker
        let environment = try ConfigurationTestEnvironment()
            .with("PUSH_GATEWAY_ORIGIN", "http://\(marker)")
            .with("PUSH_GATEWAY_GRANT_KEYS", "\(marker):abc")
            .with("PUSH_GATEWAY_PROFILES", nil)
        let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(result.exitCode == 1)
        #expect(result.standardOutput.isEmpty)
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.contains { $0.contains("PUSH_GATEWAY_ORIGIN") })
        #expect(lines.contains { $0.contains("PUSH_GATEWAY_GRANT_KEYS") })
        #expect(lines.contains { $0.contains("PUSH_GATEWAY_PROFILES") })
        #expect(!result.standardError.contains(marker))
        #expect(!result.standardError.contains("db.internal"))
    }

    @Test(
        "the APNs module's problems are check-config's: each names its variable, exit 1; with another error they follow it in the next run"
    )
    func apnsSettingsRefused() throws {
        let key = "PUSH_GATEWAY_PROFILE_BUZZ_IOS_PRODUCTION_"
        let marker = ConfigurationTestEnvironment.marker
        let environment = try ConfigurationTestEnvironment()
        let broken = environment.with(key + "APNS_KEY_FILE", try environment.write("k.p8", "not a key \(marker)"))
            .with(key + "APNS_TEAM_ID", marker).with(key + "APNS_ENVIRONMENT", "staging")
        let result = CheckConfigCommand.execute(arguments: [], environment: broken.variables)
        #expect(result.exitCode == 1 && result.standardOutput.isEmpty)
        #expect(
            result.standardError == """
                push-gateway check-config: configuration error: \(key)APNS_ENVIRONMENT: must be one of production, sandbox
                push-gateway check-config: configuration error: \(key)APNS_KEY_FILE: must hold the .p8 PEM private key (BEGIN PRIVATE KEY)
                push-gateway check-config: configuration error: \(key)APNS_TEAM_ID: must be the 10-character upper-case team id

                """)
        // The configuration's own errors come first; the module reads a profile that parsed.
        let both = CheckConfigCommand.execute(
            arguments: [], environment: broken.with("PUSH_GATEWAY_LOG_LEVEL", "loud").variables)
        #expect(both.exitCode == 1)
        #expect(
            both.standardError
                == "push-gateway check-config: configuration error: PUSH_GATEWAY_LOG_LEVEL: must be one of debug, info, warning, error\n"
        )
    }

    @Test("a DATABASE_URL libpq cannot parse is refused by name, never quoted, directly or through its _FILE")
    func malformedDatabaseURL() throws {
        let marker = ConfigurationTestEnvironment.marker
        let reference = try ConfigurationTestEnvironment()
        let malformed = [
            "not a url at all", "postgresql://gateway:\(marker)@db.internal/push?sslmode", "host=db \(marker)",
            "postgresql://gateway:\(marker)@db.internal/push?no_such_option=1",
        ]
        for value in malformed {
            let file = try reference.write("database-url", value + "\n")
            for environment in [
                reference.with("DATABASE_URL", value),
                reference.with("DATABASE_URL", nil).with("DATABASE_URL_FILE", file),
            ] {
                let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
                #expect(result.exitCode == 1, "\(value)")
                #expect(
                    result.standardError
                        == "push-gateway check-config: configuration error: DATABASE_URL: "
                        + GatewayConfiguration.databaseURLSyntax + "\n")
                #expect(!result.standardError.contains(marker) && !result.standardError.contains("url at all"))
            }
        }
        for valid in ["postgresql://gateway@db.internal:5433/push?sslmode=require", "host=db.internal dbname=push"] {
            let result = CheckConfigCommand.execute(
                arguments: [], environment: reference.with("DATABASE_URL", valid).variables)
            #expect(result.exitCode == 0, "\(valid): \(result.standardError)")
        }
    }

    @Test("a trusted proxy list that trusts every address (0.0.0.0/0, ::/0) is refused; proxy networks are not")
    func everyAddressIsNoProxy() throws {
        let reference = try ConfigurationTestEnvironment()
        for (list, item) in [("0.0.0.0/0", 1), ("10.0.0.0/8,::/0", 2), ("::/0,0.0.0.0/0", 1)] {
            let result = CheckConfigCommand.execute(
                arguments: [], environment: reference.with("PUSH_GATEWAY_TRUSTED_PROXIES", list).variables)
            #expect(result.exitCode == 1, "\(list)")
            #expect(
                result.standardError.hasPrefix(
                    "push-gateway check-config: configuration error: PUSH_GATEWAY_TRUSTED_PROXIES: item \(item) trusts "
                        + "every address"), "\(list): \(result.standardError)")
        }
        let accepted = CheckConfigCommand.execute(
            arguments: [],
            environment: reference.with("PUSH_GATEWAY_TRUSTED_PROXIES", "10.244.0.0/16,fd00::/8").variables)
        #expect(accepted.exitCode == 0)
    }

    @Test(
        "variables of a profile PUSH_GATEWAY_PROFILES does not enable are each named in a warning, and the check passes"
    )
    func unlistedProfileVariablesWarn() throws {
        let sandbox = "PUSH_GATEWAY_PROFILE_BUZZ_IOS_SANDBOX_"
        let environment = try ConfigurationTestEnvironment()
            .with(sandbox + "APP_ID", "ABCDE12345.xyz.buzz.app")
            .with(sandbox + "APNS_ENVIRONMENT", "sandbox")
        let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(result.exitCode == 0)
        #expect(
            result.standardError == """
                push-gateway check-config: warning: \(sandbox)APNS_ENVIRONMENT: profile BUZZ_IOS_SANDBOX is not in PUSH_GATEWAY_PROFILES, ignored
                push-gateway check-config: warning: \(sandbox)APP_ID: profile BUZZ_IOS_SANDBOX is not in PUSH_GATEWAY_PROFILES, ignored

                """)
        let enabled = environment.with("PUSH_GATEWAY_PROFILES", "buzz-ios-production,buzz-ios-sandbox")
            .with(sandbox + "APNS_TOPIC", "xyz.buzz.app")
            .with(sandbox + "APNS_CERT_FILE", "/nonexistent")
        let listed = CheckConfigCommand.execute(arguments: [], environment: enabled.variables)
        #expect(!listed.standardError.contains("is not in PUSH_GATEWAY_PROFILES"))
    }

    @Test("the lifecycle bucket's rate is accepted in 1..1000000 and refused outside it, naming only the variable")
    func lifecycleRate() throws {
        for (value, exitCode) in [("1", 0), ("1000000", 0), ("0", 1), ("1000001", 1), ("600/min", 1)] {
            let environment = try ConfigurationTestEnvironment().with("PUSH_GATEWAY_LIFECYCLE_RATE_PER_MINUTE", value)
            let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
            #expect(result.exitCode == exitCode, "\(value)")
            #expect(!result.standardError.contains("unknown"), "a variable the gateway reads")
            if exitCode == 1 {
                #expect(result.standardError.contains("PUSH_GATEWAY_LIFECYCLE_RATE_PER_MINUTE"))
                #expect(!result.standardError.contains("600/min"), "never the value")
            }
        }
    }

    @Test("an android profile is accepted and summarized; a broken service-account file is named, exit 1")
    func androidProfile() throws {
        let environment = try ConfigurationTestEnvironment().withAndroidProfile(
            authority: try SyntheticKeyAttestationAuthority())
        let accepted = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(accepted.exitCode == 0, "\(accepted.standardError)")
        #expect(
            accepted.standardOutput.contains(
                "profile buzz-android: android, key attestation tee minimum, verified boot, 1 signing certificate "
                    + "digest(s), fcm service account\n"))
        #expect(!accepted.standardOutput.contains(ConfigurationTestEnvironment.fcmProjectID))
        #expect(!accepted.standardError.contains("does not fetch"))
        // Without a status file the list is fetched from Google's URL (docs/decisions/0510): no warning.
        let fetched = CheckConfigCommand.execute(
            arguments: [],
            environment: environment.with("PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_FILE", nil).variables)
        #expect(fetched.exitCode == 0)
        #expect(!fetched.standardError.contains("status list"))

        let variable = "PUSH_GATEWAY_PROFILE_BUZZ_ANDROID_FCM_SERVICE_ACCOUNT_FILE"
        let broken = environment.with(variable, try environment.write("broken.json", #"{"type":"service_account"}"#))
        let result = CheckConfigCommand.execute(arguments: [], environment: broken.variables)
        #expect(result.exitCode == 1)
        #expect(result.standardOutput.isEmpty)
        let lines = result.standardError.split(separator: "\n").filter { $0.contains("configuration error") }
        #expect(lines.count == 1)
        #expect(lines.first?.contains(variable) == true)
        #expect(lines.first?.contains("service-account") == true)
    }

    @Test(
        "pinned verified boot keys are counted in the summary; the withdrawn self-signed allowance is an error naming its replacement"
    )
    func androidVerifiedBootKeys() throws {
        let environment = try ConfigurationTestEnvironment().withAndroidProfile(
            authority: try SyntheticKeyAttestationAuthority())
        let key = "PUSH_GATEWAY_PROFILE_BUZZ_ANDROID_"
        let bootKeys = String(repeating: "0f", count: 32) + "," + String(repeating: "F0", count: 32)
        let pinned = CheckConfigCommand.execute(
            arguments: [], environment: environment.with(key + "ANDROID_VERIFIED_BOOT_KEYS", bootKeys).variables)
        #expect(pinned.exitCode == 0, "\(pinned.standardError)")
        #expect(pinned.standardOutput.contains("verified boot or self-signed with 2 pinned key(s)"))
        #expect(!pinned.standardOutput.lowercased().contains("0f0f0f"), "never the keys themselves")
        let withdrawn = CheckConfigCommand.execute(
            arguments: [], environment: environment.with(key + "ANDROID_ALLOW_SELF_SIGNED_BOOT", "true").variables)
        #expect(withdrawn.exitCode == 1)
        let lines = withdrawn.standardError.split(separator: "\n").filter { $0.contains("configuration error") }
        #expect(lines.count == 1)
        #expect(lines.first?.contains(key + "ANDROID_ALLOW_SELF_SIGNED_BOOT: is withdrawn") == true)
        #expect(lines.first?.contains(key + "ANDROID_VERIFIED_BOOT_KEYS") == true)
    }

    @Test("any argument is a usage error with exit status 2")
    func usage() throws {
        let environment = try ConfigurationTestEnvironment()
        for arguments in [["--verbose"], ["extra"]] {
            let result = CheckConfigCommand.execute(arguments: arguments, environment: environment.variables)
            #expect(result.exitCode == 2)
            #expect(result.standardError.hasPrefix("push-gateway check-config: "))
            #expect(result.standardOutput.isEmpty)
        }
    }

    @Test("the check-config subcommand is wired into the dispatcher")
    func dispatched() throws {
        let environment = try ConfigurationTestEnvironment()
        #expect(
            CommandLineTool.run(arguments: ["push-gateway", "check-config"], environment: environment.variables) == 0)
        #expect(CommandLineTool.run(arguments: ["push-gateway", "check-config"], environment: [:]) == 1)
    }
}

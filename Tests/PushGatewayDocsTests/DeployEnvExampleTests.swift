import Foundation
import PushCrypto
import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import PushGatewayCommands

/// One `deploy/*.env.example`: the platforms and modes it declares on its `# Platform:` and `# Mode:`
/// lines, its settings, and the settings it shows commented out.
struct DeployEnvExample {
    let path: String
    let platforms: [String]
    let modes: [String]
    let settings: [String: String]
    let optional: [(name: String, value: String)]

    init(path: String, text: String) {
        self.path = path
        func declared(_ label: String) -> [String] {
            text.split(separator: "\n").first { $0.hasPrefix("# \(label):") }.map {
                $0.dropFirst(label.count + 3).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            } ?? []
        }
        platforms = declared("Platform")
        modes = declared("Mode")
        var settings: [String: String] = [:]
        var optional: [(String, String)] = []
        for line in text.split(separator: "\n") {
            let commented = line.hasPrefix("#")
            let setting = commented ? line.dropFirst() : line[...]
            guard let equals = setting.firstIndex(of: "="),
                setting[..<equals].allSatisfy({ $0.isUppercase || $0.isNumber || $0 == "_" }),
                !setting[..<equals].isEmpty
            else { continue }
            let pair = (String(setting[..<equals]), String(setting[setting.index(after: equals)...]))
            if commented { optional.append(pair) } else { settings[pair.0] = pair.1 }
        }
        self.settings = settings
        self.optional = optional
    }

    /// Where the examples keep files: the secrets and the status list mirror.
    static let fileDirectory = "/etc/push-gateway/"

    /// What the file `file` under ``fileDirectory`` holds for the gateway to accept it, as an operator
    /// provides it (service accounts aside: they depend on the profile); nil for a file no example
    /// should name.
    static func testContents(ofFile file: String, reference: ConfigurationTestEnvironment) -> String? {
        switch file {
        case "database-url": return "postgresql://push_gateway_runtime@db.internal/push_gateway"
        case "grant-keys": return reference.variables["PUSH_GATEWAY_GRANT_KEYS"]
        case "token-keys": return reference.variables["PUSH_GATEWAY_TOKEN_KEYS"]
        case "challenge-keys": return reference.variables["PUSH_GATEWAY_CHALLENGE_KEYS"]
        case "fingerprint-key": return reference.variables["PUSH_GATEWAY_FINGERPRINT_KEY"]
        case "marmot-secret-key": return Hex.encode(SHA256.hash(Array("marmot server".utf8)))
        case "attestation-status.json": return #"{"entries":{}}"#
        default:
            // An APNs `.p8` key and a Web Push VAPID key are both P-256 private keys in PEM.
            let isKey = file.hasSuffix(".p8") || (file.hasPrefix("webpush-vapid-") && file.hasSuffix(".pem"))
            return isKey ? ConfigurationTestEnvironment.privateKeyPEM : nil
        }
    }

    /// `environment` with every path under ``fileDirectory`` replaced by a test file of that name.
    static func withTestFiles(
        _ environment: [String: String], reference: ConfigurationTestEnvironment
    ) throws -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in environment {
            guard value.hasPrefix(fileDirectory) else {
                result[name] = value
                continue
            }
            let file = (value as NSString).lastPathComponent
            let contents: String
            if file.hasPrefix("fcm-") && file.hasSuffix(".json") {
                // A service account of the profile's own Firebase project, as Google issues it.
                let profileKey = name.dropFirst("PUSH_GATEWAY_PROFILE_".count).dropLast(
                    "_FCM_SERVICE_ACCOUNT_FILE".count)
                let project = environment["PUSH_GATEWAY_PROFILE_\(profileKey)_FCM_PROJECT_ID"] ?? "unset"
                contents = ConfigurationTestEnvironment.serviceAccountJSON(projectID: project)
            } else {
                contents = try #require(
                    testContents(ofFile: file, reference: reference), "an env example names an unknown file \(value)")
            }
            result[name] = try reference.write(file, contents)
        }
        return result
    }

    /// Why this example is not what its `# Platform:` line promises, empty when it is: `check-config`
    /// must accept it as it is (with its files present) and with each commented-out setting
    /// uncommented, warn about nothing, and find a profile of exactly each declared platform and the
    /// declared modes. The required variables of each platform are thereby the ones `check-config`
    /// demands.
    func problems() throws -> [String] {
        guard !platforms.isEmpty else { return ["\(path) declares no platform (a `# Platform: …` line)"] }
        let known = AppProfile.Platform.allCases.map(\.rawValue)
        if let unknown = platforms.first(where: { !known.contains($0) }) {
            return ["\(path) declares the unknown platform \(unknown)"]
        }
        let reference = try ConfigurationTestEnvironment()
        let environment = try Self.withTestFiles(settings, reference: reference)
        var problems: [String] = []
        let checked = CheckConfigCommand.execute(arguments: [], environment: environment)
        guard checked.exitCode == 0 else {
            return ["\(path): check-config refuses it: \(checked.standardError)"]
        }
        if !checked.standardError.isEmpty { problems.append("\(path): check-config warns: \(checked.standardError)") }
        let configuration = try GatewayConfiguration(environment: environment)
        let profilePlatforms = Set(configuration.profiles.map(\.platform.rawValue))
        if profilePlatforms != Set(platforms) {
            problems.append("\(path) declares \(platforms) but its profiles are \(profilePlatforms.sorted())")
        }
        if modes.contains("marmot") != (configuration.marmot != nil) {
            problems.append("\(path): `# Mode: marmot` and the Marmot settings disagree")
        }
        for (name, value) in optional {
            var uncommented = settings
            uncommented[name] = value
            let result = CheckConfigCommand.execute(
                arguments: [], environment: try Self.withTestFiles(uncommented, reference: reference))
            if result.exitCode != 0 || !result.standardError.isEmpty {
                problems.append("\(path): \(name)=\(value), uncommented, is refused: \(result.standardError)")
            }
        }
        return problems
    }
}

@Suite("deploy/'s env examples: one per platform, each complete by check-config's own rules", .testBodyThreads)
struct DeployEnvExampleTests {
    static func examples() throws -> [DeployEnvExample] {
        try DocsConsistencyTests.files(under: "deploy").filter { $0.hasSuffix(".env.example") }.map {
            DeployEnvExample(path: $0, text: try DocsTests.read($0))
        }
    }

    @Test("every env example in deploy/ declares its platform and check-config accepts it, its optional settings too")
    func everyExampleIsComplete() throws {
        let examples = try Self.examples()
        for example in examples {
            let problems = try example.problems()
            #expect(problems.isEmpty, "\(problems)")
            #expect(example.settings.count > 10 && !example.optional.isEmpty, "\(example.path)")
        }
        // Every platform the gateway has is covered, and the Marmot mode.
        let covered = Set(examples.flatMap(\.platforms))
        #expect(covered == Set(AppProfile.Platform.allCases.map(\.rawValue)))
        #expect(examples.contains { $0.modes.contains("marmot") })
    }

    /// The Android example's text with `transform` applied.
    static func androidExample(_ transform: (String) -> String) throws -> DeployEnvExample {
        let path = "deploy/push-gateway-android.env.example"
        return DeployEnvExample(path: path, text: transform(try DocsTests.read(path)))
    }

    @Test("the checker catches an example missing a required variable, an undeclared platform and a wrong declaration")
    func checkerCatchesPlants() throws {
        #expect(try Self.androidExample { $0 }.problems().isEmpty)
        let missing = try Self.androidExample {
            $0.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.hasPrefix("PUSH_GATEWAY_PROFILE_ANDROIDAPP_FCM_PROJECT_ID=") }.joined(separator: "\n")
        }.problems()
        #expect(
            missing.count == 1 && missing[0].contains("PUSH_GATEWAY_PROFILE_ANDROIDAPP_FCM_PROJECT_ID"), "\(missing)")
        let undeclared = try Self.androidExample { $0.replacingOccurrences(of: "# Platform: android\n", with: "") }
        #expect(try undeclared.problems() == ["\(undeclared.path) declares no platform (a `# Platform: …` line)"])
        let wrong = try Self.androidExample {
            $0.replacingOccurrences(of: "# Platform: android\n", with: "# Platform: ios\n")
        }.problems()
        #expect(wrong.count == 1 && wrong[0].contains("but its profiles are [\"android\"]"), "\(wrong)")
        let misspelt = try Self.androidExample {
            $0.replacingOccurrences(of: "#PUSH_GATEWAY_EGRESS_PROXY=", with: "#PUSH_GATEWAY_EGRES_PROXY=")
        }.problems()
        #expect(misspelt.count == 1 && misspelt[0].contains("PUSH_GATEWAY_EGRES_PROXY"), "\(misspelt)")
    }

    @Test(
        "the Android example has a webpush profile check-config accepts, every global Web Push variable of §12, and the checker catches a missing VAPID subject"
    )
    func androidExampleCoversWebPush() throws {
        let example = try Self.androidExample { $0 }
        let reference = try ConfigurationTestEnvironment()
        let configuration = try GatewayConfiguration(
            environment: try DeployEnvExample.withTestFiles(example.settings, reference: reference))
        #expect(configuration.profiles.map(\.provider.rawValue).sorted() == ["fcm", "webpush"])
        let named = Set(example.settings.keys).union(example.optional.map(\.name))
        for variable in [
            "PUSH_GATEWAY_PROFILE_UNIFIEDPUSH_WEBPUSH_VAPID_KEY_FILE",
            "PUSH_GATEWAY_PROFILE_UNIFIEDPUSH_WEBPUSH_VAPID_SUBJECT",
            "PUSH_GATEWAY_PROFILE_UNIFIEDPUSH_WEBPUSH_ALLOWED_HOSTS", "PUSH_GATEWAY_WEBPUSH_ORIGIN_RATE_PER_SECOND",
            "PUSH_GATEWAY_WEBPUSH_MAX_CONNECTIONS", "PUSH_GATEWAY_WEBPUSH_NAT64_PREFIXES",
            "PUSH_GATEWAY_WEBPUSH_DENY_CIDRS", "PUSH_GATEWAY_PROFILE_UNIFIEDPUSH_ANDROID_VERIFIED_BOOT_KEYS",
        ] {
            #expect(named.contains(variable), "the Android example does not name \(variable)")
        }
        let subject = "PUSH_GATEWAY_PROFILE_UNIFIEDPUSH_WEBPUSH_VAPID_SUBJECT"
        let missing = try Self.androidExample {
            $0.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix(subject + "=") }
                .joined(separator: "\n")
        }.problems()
        #expect(missing.count == 1 && missing[0].contains(subject), "\(missing)")
    }
}

import Foundation
import PushCrypto

/// `push-gateway-demo init-root`, `init-android-root`, `run` and `android` (docs/decisions/0110,
/// 0741): exit 0 on success (and for `--help`), 1 when a step failed, 2 on a usage error.
enum DemoCommand {
    static let usage = """
        usage: push-gateway-demo init-root --dir DIR
               push-gateway-demo init-android-root --dir DIR
               push-gateway-demo run --gateway URL --origin ORIGIN --profile ID --app-id APP_ID \\
                   --app-attest-environment development|production --root-dir DIR [--apns-record FILE] \\
                   [--relay-key-file FILE]
               push-gateway-demo android --gateway URL --origin ORIGIN --profile ID --package NAME \\
                   --signing-cert-sha256 HEX --root-dir DIR [--fcm-record FILE] [--relay-key-file FILE]
               push-gateway-demo --help

        init-root          creates (once) a synthetic App Attest CA under DIR; give DIR/root.pem to the gateway
                           as PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE (with PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT=true)
        init-android-root  creates (once) a synthetic Key Attestation CA under DIR; give DIR/root.pem to the
                           gateway as PUSH_GATEWAY_ANDROID_ATTESTATION_ROOT_CA_FILE (with
                           PUSH_GATEWAY_ALLOW_UNTRUSTED_ANDROID_ROOT=true)
        run                plays an iPhone app and a relay through challenge, enroll, delegate and deliver
                           against the gateway's public listener URL, then shows what apns-mock recorded
        android            plays an Android app of package NAME, signed by the certificate whose SHA-256 is
                           HEX (64 hex digits, one of the profile's), and a relay through challenge, enroll
                           (POST /v1/installations/android), delegate and deliver (POST /v1/deliveries),
                           then shows what fcm-mock recorded (--fcm-record, its --record file)
        --relay-key-file   the relay's secp256k1 secret key as 64 lowercase hex digits (one trailing newline
                           allowed), the file `push-gateway deliver --relay-key-file` reads; the grant is
                           delegated to its public key, and the demo prints both and the `deliver`
                           command that uses them. Without it, a fresh key for the run.

        """

    static func main(arguments: [String]) -> Int32 {
        guard let command = arguments.first else { return usageError("a command is required") }
        if ["--help", "-h", "help"].contains(command) || arguments.dropFirst().contains("--help") {
            print(usage, terminator: "")
            return 0
        }
        let options: [String: String]
        switch parse(Array(arguments.dropFirst())) {
        case .success(let parsed): options = parsed
        case .failure(let problem): return usageError(problem.description)
        }
        switch command {
        case "init-root", "init-android-root":
            guard let directory = options["--dir"], options.count == 1 else {
                return usageError("\(command) takes exactly --dir")
            }
            let android = command == "init-android-root"
            let kind = android ? "Key Attestation" : "App Attest"
            return perform {
                let created =
                    android
                    ? try LocalKeyAttestationRoot.create(in: directory) : try LocalAppAttestRoot.create(in: directory)
                print(
                    created
                        ? "push-gateway-demo: created a synthetic \(kind) root in \(directory)"
                        : "push-gateway-demo: keeping the synthetic \(kind) root in \(directory)")
            }
        case "run": return run(options)
        case "android": return android(options)
        default:
            return usageError("unknown command '\(command)'")
        }
    }

    private static func run(_ options: [String: String]) -> Int32 {
        if let problem = problem(
            with: options, command: "run", required: ["--app-id", "--app-attest-environment"],
            optional: "--apns-record")
        {
            return usageError(problem)
        }
        guard ["development", "production"].contains(options["--app-attest-environment"]!) else {
            return usageError("--app-attest-environment must be development or production")
        }
        return play(options, reached: "apns-mock") {
            try IPhoneDemoApp(
                authority: try LocalAppAttestRoot.load(from: options["--root-dir"]!), appID: options["--app-id"]!,
                appAttestEnvironment: options["--app-attest-environment"]!,
                apnsRecordFile: options["--apns-record"])
        }
    }

    private static func android(_ options: [String: String]) -> Int32 {
        if let problem = problem(
            with: options, command: "android", required: ["--package", "--signing-cert-sha256"],
            optional: "--fcm-record")
        {
            return usageError(problem)
        }
        guard let digest = Hex.decode(options["--signing-cert-sha256"]!, byteCount: 32, lowercaseOnly: false) else {
            return usageError("--signing-cert-sha256 must be 64 hex digits")
        }
        return play(options, reached: options["--fcm-record"] == nil ? "FCM" : "fcm-mock") {
            try AndroidDemoApp(
                root: try LocalKeyAttestationRoot.load(from: options["--root-dir"]!),
                packageName: options["--package"]!, signingCertificateDigest: digest,
                fcmRecordFile: options["--fcm-record"])
        }
    }

    /// The flags every flow takes besides its own: the gateway, the origin, the profile and the root.
    private static let sharedFlags = ["--gateway", "--origin", "--profile", "--root-dir"]

    /// Why `options` do not fit `command`, which takes ``sharedFlags`` and `required`, and optionally
    /// its record file `optional` and `--relay-key-file`; nil when they do.
    private static func problem(
        with options: [String: String], command: String, required: [String], optional: String
    ) -> String? {
        let required = sharedFlags + required
        guard required.allSatisfy({ options[$0] != nil }),
            Set(options.keys).isSubset(of: Set(required + [optional, "--relay-key-file"]))
        else {
            return
                "\(command) takes \(required.joined(separator: ", ")) and optionally \(optional) and --relay-key-file"
        }
        return relayKeyProblem(options)
    }

    /// Runs the flow of the app `makeApp` makes against the gateway `options` name, printing each step.
    private static func play<App: DemoApp>(
        _ options: [String: String], reached standIn: String, makeApp: () throws -> App
    ) -> Int32 {
        let settings = DemoSettings(
            gatewayURL: options["--gateway"]!, origin: options["--origin"]!, profile: options["--profile"]!,
            relayKeyFile: options["--relay-key-file"])
        return perform {
            _ = try DemoFlow(settings: settings, app: try makeApp()) { print($0) }.run()
            print("push-gateway-demo: the delivery reached \(standIn); done")
        }
    }

    /// Why the `--relay-key-file` given cannot be used (a usage error, as for `push-gateway deliver`).
    private static func relayKeyProblem(_ options: [String: String]) -> String? {
        guard let file = options["--relay-key-file"] else { return nil }
        do {
            _ = try DemoRelayKey.load(from: file)
            return nil
        } catch {
            return "--relay-key-file: \(error)"
        }
    }

    /// `--flag value` pairs, each flag at most once.
    static func parse(_ arguments: [String]) -> Result<[String: String], DemoError> {
        var options: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let flag = arguments[index]
            guard flag.hasPrefix("--"), index + 1 < arguments.count else {
                return .failure(DemoError("\(flag) needs a value"))
            }
            guard options.updateValue(arguments[index + 1], forKey: flag) == nil else {
                return .failure(DemoError("\(flag) is given twice"))
            }
            index += 2
        }
        return .success(options)
    }

    private static func perform(_ body: () throws -> Void) -> Int32 {
        do {
            try body()
            return 0
        } catch {
            FileHandle.standardError.write(Data("push-gateway-demo: \(error)\n".utf8))
            return 1
        }
    }

    private static func usageError(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("push-gateway-demo: \(message)\n\(usage)".utf8))
        return 2
    }
}

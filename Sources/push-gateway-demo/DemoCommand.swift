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
        let required = ["--gateway", "--origin", "--profile", "--app-id", "--app-attest-environment", "--root-dir"]
        guard required.allSatisfy({ options[$0] != nil }),
            Set(options.keys).isSubset(of: Set(required + ["--apns-record", "--relay-key-file"]))
        else {
            return usageError(
                "run takes \(required.joined(separator: ", ")) and optionally --apns-record and --relay-key-file")
        }
        guard ["development", "production"].contains(options["--app-attest-environment"]!) else {
            return usageError("--app-attest-environment must be development or production")
        }
        if let problem = relayKeyProblem(options) { return usageError(problem) }
        let settings = DemoSettings(
            gatewayURL: options["--gateway"]!, origin: options["--origin"]!, profile: options["--profile"]!,
            appID: options["--app-id"]!, appAttestEnvironment: options["--app-attest-environment"]!,
            apnsRecordFile: options["--apns-record"], relayKeyFile: options["--relay-key-file"])
        return perform {
            let authority = try LocalAppAttestRoot.load(from: options["--root-dir"]!)
            _ = try DemoFlow(settings: settings, authority: authority) { print($0) }.run()
            print("push-gateway-demo: the delivery reached apns-mock; done")
        }
    }

    private static func android(_ options: [String: String]) -> Int32 {
        let required = ["--gateway", "--origin", "--profile", "--package", "--signing-cert-sha256", "--root-dir"]
        guard required.allSatisfy({ options[$0] != nil }),
            Set(options.keys).isSubset(of: Set(required + ["--fcm-record", "--relay-key-file"]))
        else {
            return usageError(
                "android takes \(required.joined(separator: ", ")) and optionally --fcm-record and --relay-key-file")
        }
        guard let digest = Hex.decode(options["--signing-cert-sha256"]!, byteCount: 32, lowercaseOnly: false) else {
            return usageError("--signing-cert-sha256 must be 64 hex digits")
        }
        if let problem = relayKeyProblem(options) { return usageError(problem) }
        let settings = AndroidDemoSettings(
            gatewayURL: options["--gateway"]!, origin: options["--origin"]!, profile: options["--profile"]!,
            packageName: options["--package"]!, signingCertificateDigest: digest,
            fcmRecordFile: options["--fcm-record"],
            relayKeyFile: options["--relay-key-file"])
        return perform {
            let root = try LocalKeyAttestationRoot.load(from: options["--root-dir"]!)
            _ = try AndroidDemoFlow(settings: settings, root: root) { print($0) }.run()
            print("push-gateway-demo: the delivery reached \(settings.fcmRecordFile == nil ? "FCM" : "fcm-mock"); done")
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

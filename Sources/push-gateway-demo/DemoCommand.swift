import Foundation

/// `push-gateway-demo init-root --dir DIR` and `push-gateway-demo run …`: exit 0 on success, 1
/// when a step failed, 2 on a usage error.
enum DemoCommand {
    static let usage = """
        usage: push-gateway-demo init-root --dir DIR
               push-gateway-demo run --gateway URL --origin ORIGIN --profile ID --app-id APP_ID \
        --app-attest-environment development|production --root-dir DIR [--apns-record FILE]

        init-root   creates (once) a synthetic App Attest CA under DIR; give DIR/root.pem to the gateway as
                    PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE (with PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT=true)
        run         plays a device and a relay through challenge, enroll, delegate and deliver against the
                    gateway's public listener URL, then shows what apns-mock recorded for the delivery

        """

    static func main(arguments: [String]) -> Int32 {
        guard let command = arguments.first else { return usageError("a command is required") }
        let options: [String: String]
        switch parse(Array(arguments.dropFirst())) {
        case .success(let parsed): options = parsed
        case .failure(let problem): return usageError(problem.description)
        }
        switch command {
        case "init-root":
            guard let directory = options["--dir"], options.count == 1 else {
                return usageError("init-root takes exactly --dir")
            }
            return perform {
                let created = try LocalAppAttestRoot.create(in: directory)
                print(
                    created
                        ? "push-gateway-demo: created a synthetic App Attest root in \(directory)"
                        : "push-gateway-demo: keeping the synthetic App Attest root in \(directory)")
            }
        case "run":
            let required = ["--gateway", "--origin", "--profile", "--app-id", "--app-attest-environment", "--root-dir"]
            guard required.allSatisfy({ options[$0] != nil }),
                Set(options.keys).isSubset(of: Set(required + ["--apns-record"]))
            else { return usageError("run takes \(required.joined(separator: ", ")) and optionally --apns-record") }
            guard ["development", "production"].contains(options["--app-attest-environment"]!) else {
                return usageError("--app-attest-environment must be development or production")
            }
            let settings = DemoSettings(
                gatewayURL: options["--gateway"]!, origin: options["--origin"]!, profile: options["--profile"]!,
                appID: options["--app-id"]!, appAttestEnvironment: options["--app-attest-environment"]!,
                apnsRecordFile: options["--apns-record"])
            return perform {
                let authority = try LocalAppAttestRoot.load(from: options["--root-dir"]!)
                _ = try DemoFlow(settings: settings, authority: authority) { print($0) }.run()
                print("push-gateway-demo: the delivery reached apns-mock; done")
            }
        default:
            return usageError("unknown command")
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

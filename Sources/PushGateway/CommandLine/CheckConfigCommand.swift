/// `push-gateway check-config` (PROTOCOL.md §12): validates the environment without touching the
/// network or the database. Prints `configuration ok`, the enabled profiles and the insecure
/// settings in use (never a secret or any value an operator did not choose to publish), or every
/// error on standard error.
enum CheckConfigCommand: InProcessCommand {
    static let usage = "usage: push-gateway check-config\n"

    static func execute(arguments: [String], environment: [String: String]) -> CommandResult {
        guard arguments.isEmpty else {
            return .usageError(usage)
        }
        do {
            let configuration = try GatewayConfiguration(environment: environment)
            let problems = StartupChecks.problems(configuration)
            guard problems.isEmpty else {
                return .failure(problems.map { "configuration error: \($0.description)\n" }.joined())
            }
            return .success(summary(configuration))
        } catch {
            let lines = error.errors.map { "configuration error: \($0.description)\n" }.joined()
            return .failure(lines)
        }
    }

    private static func summary(_ configuration: GatewayConfiguration) -> String {
        var text = "configuration ok\n"
        for profile in configuration.profiles {
            let authentication: String
            switch profile.apnsAuthentication {
            case .token: authentication = "token"
            case .certificate: authentication = "certificate"
            }
            text +=
                "profile \(profile.id): apns \(profile.apnsEnvironment.rawValue), app attest "
                + "\(profile.appAttestEnvironment.rawValue), \(authentication) auth\n"
        }
        text += "capacity: \(configuration.databasePoolSize) database sessions, \(configuration.workerCount) workers\n"
        let insecure = configuration.insecureSettings
        text += "insecure settings: " + (insecure.isEmpty ? "none" : insecure.joined(separator: ", ")) + "\n"
        return text
    }
}

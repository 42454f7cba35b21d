import GatewayConfiguration
import GatewayCredentials
import PushCrypto
import PushDelivery
import PushGateway
import PushSystem
import Synchronization

/// `push-gateway send-test-push --profile P --endpoint E` (docs/decisions/0363, 0771): the operator's
/// smoke test of a profile's push credentials, for every provider. Reads the same environment as
/// `serve`, sends the constant wake-up of docs/protocol.md §8/§8a to one raw endpoint through the
/// profile's provider module, credentials and egress proxy, and prints the service's status and
/// reason. The endpoint's syntax and the profile's description come from the provider module.
/// Touches no database; `serve` never runs it. Exit 0 when the service accepted the push, 1 for any
/// other answer or a configuration error, 2 for usage errors. The endpoint is never printed.
enum SendTestPushCommand: InProcessCommand {
    static let usage = """
        usage: push-gateway send-test-push --profile ID --endpoint ENDPOINT
          ENDPOINT is in the profile's provider format: an APNs device token in hex, an FCM
          registration token.

        """

    /// The wake-up's `apns-expiration`: a test push that cannot be delivered soon is not worth keeping.
    static let lifetimeSeconds: Int64 = 60

    struct Options: Equatable {
        var profile: String
        /// As given; the profile's provider decides whether it is an endpoint.
        var endpoint: String
    }

    /// The flags, or the usage problem.
    enum Parsed: Equatable {
        case options(Options)
        case usage(CommandResult)
    }

    static func parse(_ arguments: [String]) -> Parsed {
        var profile: String?
        var token: String?
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            guard let value = remaining.popFirst(), !value.isEmpty else {
                return .usage(.usageError("push-gateway send-test-push: \(flag) needs a value\n" + usage))
            }
            switch flag {
            case "--profile" where profile == nil: profile = value
            case "--endpoint" where token == nil: token = value
            default:
                return .usage(
                    .usageError("push-gateway send-test-push: unknown or repeated option \(flag)\n" + usage))
            }
        }
        guard let profile, let token else {
            return .usage(.usageError("push-gateway send-test-push: --profile and --endpoint are required\n" + usage))
        }
        return .options(Options(profile: profile, endpoint: token))
    }

    static func execute(arguments: [String], environment: [String: String]) -> CommandResult {
        execute(arguments: arguments, environment: environment, now: KeygenCommand.currentTime())
    }

    /// The command with the clock (Unix seconds) and the provider modules given, for tests.
    static func execute(
        arguments: [String], environment: [String: String], now: Int64,
        modules: PushProviderModules = .standard
    ) -> CommandResult {
        let options: Options
        switch parse(arguments) {
        case .options(let parsed): options = parsed
        case .usage(let problem): return problem
        }
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration(environment: environment)
        } catch {
            return .failure(CheckConfigCommand.errorLines(error.problems, command: "send-test-push"))
        }
        let problems = StartupChecks.problems(configuration, now: now, modules: modules)
        guard problems.isEmpty else {
            return .failure(CheckConfigCommand.errorLines(problems, command: "send-test-push"))
        }
        guard let profile = configuration.profiles.first(where: { $0.id == options.profile }) else {
            let enabled = configuration.profiles.map(\.id).joined(separator: ", ")
            return .failure(
                "push-gateway send-test-push: profile \(options.profile) is not in PUSH_GATEWAY_PROFILES (\(enabled))\n"
            )
        }
        guard let module = modules.module(for: profile.provider) else {
            preconditionFailure("StartupChecks refuses a profile whose provider no module serves")
        }
        guard let endpoint = module.endpoint(options.endpoint) else {
            return .usageError("push-gateway send-test-push: --endpoint must be \(module.endpointSyntax)\n")
        }
        // One wake needs one loop; two workers leave room for a token renewal beside a name lookup.
        let runtime: Runtime
        do {
            runtime = try Runtime(loopCount: 1, workerCount: 2, queueCapacity: 16)
        } catch {
            return .failure("push-gateway send-test-push: the event loop and workers could not start: \(error)\n")
        }
        defer { runtime.shutdown() }
        let providers: [String: any PushProvider]
        let requestID: CanonicalUUID
        do {
            providers = try PushProviders.make(configuration: configuration, modules: modules, runtime: runtime)
            requestID = try CanonicalUUID.version4()
        } catch {
            return .failure("push-gateway send-test-push: \(error)\n")
        }
        // Deferred after the runtime's shutdown, so it runs before it (docs/decisions/0870).
        defer { for provider in providers.values { provider.shutdown() } }
        let report = send(
            PushWake(
                deviceToken: endpoint, profileID: profile.id, style: .reconnect,
                expiresAt: now + lifetimeSeconds, requestID: requestID.text),
            through: providers[profile.id], service: module.service)
        var result = CommandResult.success(
            describe(profile, module: module, configuration: configuration)
                + describe(report, serviceName: module.displayName))
        if report.outcome != .accepted { result.exitCode = 1 }
        return result
    }

    private static func describe(
        _ profile: AppProfile, module: any PushProviderModule, configuration: GatewayConfiguration
    ) -> String {
        let route = configuration.egressProxy.map { " through the proxy \($0.host):\($0.port)" } ?? ""
        return "profile \(profile.id): \(module.describe(profile))\(route)\n"
    }

    /// Sends one wake and waits for its report: the push service answers within its §8 deadlines.
    private static func send(
        _ wake: PushWake, through provider: (any PushProvider)?, service: PushService
    ) -> PushReport {
        guard let provider else { return .notSent(.configurationFault(.missingCredentials), service: service) }
        let answer = Mutex<PushReport?>(nil)
        let answered = CompletionLatch()
        provider.submit(wake) { report in
            answer.withLock { $0 = report }
            answered.open()
        }
        answered.wait()
        return answer.withLock { $0! }
    }

    /// The service's status and reason, and what they mean for the operator.
    static func describe(_ report: PushReport, serviceName: String) -> String {
        guard let outcome = report.requestOutcome else {
            // A provider that stopped before sending says why in its closed reason label (Web Push's
            // `refused_address`, docs/protocol.md §12); otherwise the credentials did not load.
            if let reason = report.reason { return "no request sent: \(reason)\n" }
            return "no request sent: the profile's credentials did not load\n"
        }
        let meaning =
            switch outcome {
            case .accepted: "the credentials, topic and environment work for this token"
            case .invalidEndpoint: "the token is no longer valid for this topic (app removed or token rotated)"
            case .configurationFault:
                "the credentials, topic, project or environment do not fit (a sandbox token sent to production?)"
            case .rejected: "\(serviceName) refused the request itself"
            case .transient: "\(serviceName) is busy or failing; try again"
            case .transportFailure: "\(serviceName) was not reached: DNS, network, egress proxy or TLS"
            case .timeout: "\(serviceName) did not answer in time"
            }
        guard let status = report.status else {
            return "no answer from \(serviceName): \(outcome.rawValue) (\(meaning))\n"
        }
        let reason = report.reason.map { " \($0)" } ?? ""
        return "\(serviceName) answered \(status)\(reason): \(outcome.rawValue) (\(meaning))\n"
    }
}

import GatewayConfiguration
import GatewayMetrics
import PushDelivery
import PushSystem
import Synchronization

/// Makes push service trouble visible without a line per request (docs/protocol.md §9): a
/// configuration fault is logged at `error` with the profile id and the service's reason, at most once per profile and
/// reason per interval; transient failures are counted and reported as one `warning` per profile
/// per interval. Nothing here ever holds a token.
package final class PushFaultLog: Sendable {
    private let logger: Logger
    private let providers: PushProviderModules
    private let interval: Duration
    private let state = Mutex(State())

    private struct State {
        /// When each (profile, reason) configuration fault was last logged.
        var lastFault: [String: MonotonicInstant] = [:]
        var transient: [String: TransientWindow] = [:]
    }

    /// Transient failures of one profile since its last warning.
    private struct TransientWindow {
        var lastWarning: MonotonicInstant?
        var failures = 0
        var transportFailures = 0
        var timeouts = 0
    }

    package init(logger: Logger, providers: PushProviderModules, interval: Duration = .seconds(60)) {
        self.logger = logger
        self.providers = providers
        self.interval = interval
    }

    /// Logs what one wake for `profile` showed, if anything is due.
    func record(_ report: PushReport, profile: String) {
        switch report.outcome {
        case .configurationFault: configurationFault(report, profile: profile)
        case .retry: transient(report, profile: profile)
        case .accepted, .endpointDead, .permanentRequestFault: break
        }
    }

    private func configurationFault(_ report: PushReport, profile: String) {
        let module = providers.module(for: report.service)
        // Without an answer the credentials could not even be used (missing key, TLS set-up).
        let reason = module?.reasonLabel(report) ?? "no_\(report.service.rawValue)_answer"
        let now = MonotonicInstant.now()
        let due = state.withLock { state in
            let key = profile + "\u{0}" + reason
            if let last = state.lastFault[key], last.duration(to: now) < interval { return false }
            state.lastFault[key] = now
            return true
        }
        guard due else { return }
        logger.error(
            "\(displayName(report.service)) configuration fault",
            [
                "profile": .string(profile), "reason": .string(reason),
                "fault": .string(Self.faultReason(report.outcome)),
                "\(report.service.rawValue)_status": .int(Int64(report.status ?? 0)),
            ])
    }

    private func displayName(_ service: PushService) -> String {
        providers.module(for: service)?.displayName ?? service.rawValue
    }

    private static func faultReason(_ outcome: PushOutcome) -> String {
        if case .configurationFault(let fault) = outcome { return fault.rawValue }
        return ""
    }

    private func transient(_ report: PushReport, profile: String) {
        let now = MonotonicInstant.now()
        let due: TransientWindow? = state.withLock { state in
            var window = state.transient[profile, default: TransientWindow()]
            window.failures += 1
            if report.requestOutcome == .transportFailure { window.transportFailures += 1 }
            if report.requestOutcome == .timeout { window.timeouts += 1 }
            if let last = window.lastWarning, last.duration(to: now) < interval {
                state.transient[profile] = window
                return nil
            }
            state.transient[profile] = TransientWindow(lastWarning: now)
            return window
        }
        guard let due else { return }
        logger.warning(
            "transient \(displayName(report.service)) failures",
            [
                "profile": .string(profile), "failures": .int(Int64(due.failures)),
                "transport_failures": .int(Int64(due.transportFailures)), "timeouts": .int(Int64(due.timeouts)),
                "interval_seconds": .int(interval.components.seconds),
            ])
    }
}

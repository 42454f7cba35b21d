import GatewayConfiguration
import PushSystem

/// Warns about APNs certificates that expire within 30 days: at start and once a day after
/// (docs/protocol.md §12), from a timer on a loop of the application's runtime (docs/decisions/0870;
/// a warning is a log line, which never blocks). An expired certificate never gets here: `serve`
/// refuses to start.
package final class CertificateWarnings: Sendable {
    static let checkInterval: Duration = .seconds(86_400)

    private let expiries: [CertificateExpiry]
    private let logger: Logger
    private let clock: any WallClock
    private let timers: LoopTimers

    package init(
        configuration: GatewayConfiguration, logger: Logger, timersOn loop: EventLoop,
        clock: any WallClock = SystemWallClock()
    ) {
        expiries = CertificateExpiry.of(configuration)
        self.logger = logger
        self.clock = clock
        timers = LoopTimers(on: loop)
    }

    /// Checks once a day until `stop()` when any certificate-auth profile exists (the warning at
    /// start is one of `StartupChecks.warnings`).
    package func start() {
        guard !expiries.isEmpty else { return }
        scheduleDailyCheck()
    }

    /// Cancels the daily check; returns once a check under way has finished.
    package func stop() { timers.stop() }

    private func scheduleDailyCheck() {
        timers.schedule(after: Self.checkInterval) { [self] in
            warnNow()
            scheduleDailyCheck()
        }
    }

    /// One warning per certificate that expires within 30 days (an expired one too, should a
    /// long-running replica outlive its certificate).
    func warnNow() {
        let now = clock.unixSeconds()
        for expiry in expiries where expiry.notAfter - now <= CertificateExpiry.warningWindowSeconds {
            logger.warning(
                "APNs certificate expires soon",
                [
                    "profile": .string(expiry.profile), "days_left": .int(expiry.daysLeft(at: now)),
                    "expires_at": .int(expiry.notAfter),
                ])
        }
    }
}

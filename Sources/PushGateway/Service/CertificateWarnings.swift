import GatewayConfiguration
import PushSystem
import Synchronization

/// Warns about APNs certificates that expire within 30 days: at start and once a day after
/// (docs/protocol.md §12). An expired certificate never gets here: `serve` refuses to start.
package final class CertificateWarnings: Sendable {
    private let expiries: [CertificateExpiry]
    private let logger: Logger
    private let clock: any WallClock
    private let stopRequested = CompletionLatch()
    private let thread = Mutex<PosixThread?>(nil)

    package init(configuration: GatewayConfiguration, logger: Logger, clock: any WallClock = SystemWallClock()) {
        expiries = CertificateExpiry.of(configuration)
        self.logger = logger
        self.clock = clock
    }

    /// Checks once a day until `stop()` when any certificate-auth profile exists (the warning at
    /// start is one of `StartupChecks.warnings`).
    package func start() {
        guard !expiries.isEmpty else { return }
        let spawned = try? PosixThread.spawn(name: "cert-warnings") { [self] in
            while !stopRequested.wait(until: MonotonicInstant.now().advanced(by: .seconds(86_400))) {
                warnNow()
            }
        }
        if spawned == nil { logger.warning("cannot start the daily certificate expiry check") }
        thread.withLock { $0 = spawned }
    }

    package func stop() {
        stopRequested.open()
        thread.withLock { $0 }?.join()
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

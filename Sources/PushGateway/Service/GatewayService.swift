import GatewayLifecycle
import MarmotIngress
import PushSystem

/// One long-running part of a serving gateway that the composition root (`GatewayApplication`)
/// builds, starts and stops: the listeners, the reaper, the certificate warnings, the Key Attestation
/// status-list fetcher and the Marmot subscriber.
public protocol GatewayService: Sendable {
    func start() throws
    /// Asks the service to stop without waiting, so that services stop side by side.
    func beginStop()
    /// Stops the service and returns once it has stopped.
    func stop()
}

extension GatewayService {
    public func beginStop() {}
}

extension GatewayServer: GatewayService {
    /// Graceful: readiness fails, then the listeners drain (docs/protocol.md §9).
    public func stop() { drain() }
}

extension Reaper: GatewayService {
    public func stop() {
        beginStop()
        waitUntilStopped()
    }
}

extension CertificateWarnings: GatewayService {}

extension KeyAttestationStatusFetcher: GatewayService {}

extension MarmotSubscriber: GatewayService {}

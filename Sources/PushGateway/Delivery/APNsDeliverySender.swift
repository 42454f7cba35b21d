import PushAPNs
import PushHTTP2
import PushSystem
import Synchronization

/// The production sender: one APNs HTTP/2 client for the process (its connection pools are keyed
/// by environment and credential, docs/protocol.md §8) and one `APNsProfile` per configured app profile.
public final class APNsDeliverySender: DeliverySender {
    /// A profile's APNs credentials could not be loaded; names the profile, never key material.
    public struct CredentialError: Error, CustomStringConvertible {
        public let profileID: String
        public var description: String { "profile \(profileID): the APNs .p8 key does not load as a P-256 private key" }
    }

    private let client: APNsClient
    private let profiles: [String: APNsProfile]
    /// docs/protocol.md §8's per-request timeout (shortened only by the test setting).
    private let requestTimeout: Duration

    /// Loads every profile's credentials now, so `serve` refuses to start with a key that cannot sign.
    public init(configuration: GatewayConfiguration) throws {
        var profiles: [String: APNsProfile] = [:]
        for profile in configuration.profiles where profile.platform == .ios {
            profiles[profile.id] = APNsProfile(
                server: Self.server(for: profile.apnsEnvironment, configuration: configuration),
                topic: profile.apnsTopic, credential: try Self.credential(for: profile),
                extraTrustAnchorsFile: configuration.apnsExtraTrustAnchorFile)
        }
        self.profiles = profiles
        var clientConfiguration = HTTP2ClientConfiguration()
        if let timeout = configuration.apnsRequestTimeout { clientConfiguration.requestTimeout = timeout }
        clientConfiguration.proxy = configuration.apnsProxy
        self.requestTimeout = clientConfiguration.requestTimeout
        self.client = try APNsClient(configuration: clientConfiguration)
    }

    deinit { client.shutdown() }

    public func send(_ attempt: DeliveryAttempt) -> DeliveryReport {
        // Profiles come from the same configuration that admitted the attempt; a missing one means
        // the credentials are missing (docs/protocol.md §4.7 "missing credentials").
        guard let profile = profiles[attempt.profile.id] else { return DeliveryReport(.configurationFault) }
        return Self.report(of: client.send(Self.notification(for: attempt), profile: profile))
    }

    /// `completion` runs on the APNs I/O thread, or at once on the calling one for missing credentials.
    public func send(_ attempt: DeliveryAttempt, completion: @escaping @Sendable (DeliveryReport) -> Void) {
        guard let profile = profiles[attempt.profile.id] else { return completion(DeliveryReport(.configurationFault)) }
        client.send(Self.notification(for: attempt), profile: profile) { result in completion(Self.report(of: result)) }
    }

    /// docs/protocol.md §4.8: every attempt goes out at once as its own stream over the pooled
    /// connections; the worker waits for the last answer. The I/O thread answers each request by
    /// its §8 deadline; the bound only guards against a bug there leaving the worker blocked.
    /// Each report's send duration runs from its own submission to its own answer.
    public func send(_ attempts: [DeliveryAttempt]) -> [DeliveryReport] {
        let batch = PendingReports(count: attempts.count)
        let started = MonotonicInstant.now()
        for (index, attempt) in attempts.enumerated() {
            let submitted = MonotonicInstant.now()
            send(attempt) { report in batch.record(report.timed(since: submitted), at: index) }
        }
        return batch.wait(until: started.advanced(by: requestTimeout * 2 + .seconds(5)), since: started)
    }

    private static func notification(for attempt: DeliveryAttempt) -> APNsNotification {
        APNsNotification(
            deviceToken: attempt.deviceToken, requestID: attempt.requestID.text, expiresAt: attempt.expiresAt)
    }

    static func report(of result: APNsSendResult) -> DeliveryReport {
        DeliveryReport(outcome(result.outcome), exchange: exchange(result))
    }

    static func outcome(_ outcome: APNsOutcome) -> DeliveryOutcome {
        switch outcome {
        case .accepted: .accepted
        case .invalidEndpoint(let invalidAt): .invalidEndpoint(invalidAtSeconds: invalidAt)
        case .retry(let retryAfter): .retry(retryAfterSeconds: retryAfter.map(Int64.init))
        case .configurationFault: .configurationFault
        case .permanentRequestFault: .permanentRequestFault
        }
    }

    /// What went to Apple. A transient outcome without any answer is the client's failure kind
    /// (docs/protocol.md §8: a stream past its 15 s is a timeout); one where not even a request was
    /// counted is the client's overall bound, a timeout too.
    static func exchange(_ result: APNsSendResult) -> APNsExchange {
        let requestOutcome: APNsRequestOutcome?
        switch result.outcome {
        case .accepted: requestOutcome = .accepted
        case .invalidEndpoint: requestOutcome = .invalidEndpoint
        case .retry where result.status != nil: requestOutcome = .transient
        case .retry where result.failure == .timeout || result.requestsSent == 0: requestOutcome = .timeout
        case .retry: requestOutcome = .transportFailure
        case .configurationFault: requestOutcome = result.requestsSent == 0 ? nil : .configurationFault
        case .permanentRequestFault: requestOutcome = .rejected
        }
        return APNsExchange(
            requestOutcome: requestOutcome, requests: max(result.requestsSent, requestOutcome == nil ? 0 : 1),
            status: result.status, reason: result.reason)
    }

    /// Apple's host for the environment, unless a test/development override is configured (§12).
    private static func server(
        for environment: AppProfile.APNsEnvironment, configuration: GatewayConfiguration
    ) -> APNsServer {
        let override =
            switch environment {
            case .production: configuration.apnsProductionServer
            case .sandbox: configuration.apnsSandboxServer
            }
        if let override { return APNsServer(host: override.host, port: override.port) }
        return environment == .production ? .production : .sandbox
    }

    private static func credential(for profile: AppProfile) throws -> APNsProfile.Credential {
        switch profile.apnsAuthentication {
        case .token(let privateKeyPEM, let keyID, let teamID):
            do {
                return try .token(
                    teamID: teamID, keyID: keyID, privateKeyPEM: String(decoding: privateKeyPEM.bytes, as: UTF8.self))
            } catch {
                throw CredentialError(profileID: profile.id)
            }
        case .certificate(_, let path):
            // One PEM file holds the certificate and its unencrypted key (§12).
            return .certificate(certificateFile: path, keyFile: path)
        case nil:
            throw CredentialError(profileID: profile.id)
        }
    }
}

/// The reports of one batch's sends as their completions arrive on the I/O thread.
private final class PendingReports: Sendable {
    private let reports: Mutex<(slots: [DeliveryReport?], missing: Int)>
    private let done = CompletionLatch()

    init(count: Int) {
        reports = Mutex((Array(repeating: nil, count: count), count))
        if count == 0 { done.open() }
    }

    func record(_ report: DeliveryReport, at index: Int) {
        let complete = reports.withLock { state in
            state.slots[index] = report
            state.missing -= 1
            return state.missing == 0
        }
        if complete { done.open() }
    }

    /// Every report in order once all are in, or by `deadline`; one still missing then counts as
    /// a timeout, which is transient (docs/protocol.md §8), timed from `started`.
    func wait(until deadline: MonotonicInstant, since started: MonotonicInstant) -> [DeliveryReport] {
        _ = done.wait(until: deadline)
        let timedOut = DeliveryReport(
            .retry(retryAfterSeconds: nil),
            exchange: APNsExchange(requestOutcome: .timeout, requests: 1, status: nil, reason: nil)
        ).timed(since: started)
        return reports.withLock { state in state.slots.map { $0 ?? timedOut } }
    }
}

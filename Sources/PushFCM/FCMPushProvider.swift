import PushDelivery
import PushHTTP2
import PushSystem

/// FCM HTTP v1 behind the provider-neutral `PushProvider` (docs/protocol.md §4.7, §8a): each android
/// profile id names its `FCMProfile`; one `FCMClient` sends for all of them.
public final class FCMPushProvider: PushProvider {
    /// FCM's lifetime for a Marmot trigger's background wake (docs/protocol.md §13 step 7).
    public static let backgroundTimeToLiveSeconds: Int64 = 3600
    /// The longest registration token docs/protocol.md §1 admits; Google's are about 160 bytes.
    static let maximumRegistrationTokenBytes = 4096

    public var service: PushService { .fcm }

    private let profiles: [String: FCMProfile]
    private let client: FCMClient

    /// A provider whose client runs on `loop` and signs its token renewals on `workers`, both the
    /// application's runtime's (docs/decisions/0870); `clock` (Unix seconds) exists so tests can move time.
    public init(
        profiles: [String: FCMProfile], configuration: HTTP2ClientConfiguration = HTTP2ClientConfiguration(),
        on loop: EventLoop, workers: WorkerPool, clock: @escaping @Sendable () -> Int64 = FCMClient.systemClock
    ) {
        self.profiles = profiles
        client = FCMClient(configuration: configuration, on: loop, workers: workers, clock: clock)
    }

    public func submit(_ wake: PushWake, completion: @escaping @Sendable (PushReport) -> Void) {
        guard let profile = profiles[wake.profileID] else {
            completion(.notSent(.configurationFault(.missingCredentials), service: .fcm))
            return
        }
        guard let registrationToken = Self.registrationToken(wake.deviceToken) else {
            completion(.notSent(.permanentRequestFault, service: .fcm))
            return
        }
        let timeToLive: FCMMessage.TimeToLive =
            switch wake.style {
            case .reconnect: .until(wake.expiresAt)
            case .background: .fixed(Self.backgroundTimeToLiveSeconds)
            }
        let started = MonotonicInstant.now()
        client.send(FCMMessage(registrationToken: registrationToken, timeToLive: timeToLive), profile: profile) {
            result in
            completion(Self.report(result, sendDuration: started.duration(to: MonotonicInstant.now())))
        }
    }

    public func shutdown() { client.shutdown() }

    /// How the token renewals of `profileID`'s credential ended, by result (empty for an unknown id).
    public func tokenRefreshes(for profileID: String) -> [TokenRefreshResult: Int] {
        guard let profile = profiles[profileID] else { return [:] }
        return client.tokenRefreshes(for: profile)
    }

    /// The access token cached for `profileID`'s credential (tests wait for a background renewal).
    func cachedToken(for profileID: String) -> AccessToken? {
        profiles[profileID].flatMap { client.cachedToken(for: $0) }
    }

    static func report(_ result: FCMSendResult, sendDuration: Duration?) -> PushReport {
        PushReport(
            outcome: result.outcome, service: .fcm, requestOutcome: result.requestOutcome,
            requests: result.requestsSent, status: result.status,
            reason: result.errorCode == .none ? nil : result.errorCode.rawValue, sendDuration: sendDuration)
    }

    /// The stored token bytes as FCM's registration token when they have docs/protocol.md §1's
    /// format (1...4096 of `[A-Za-z0-9_:.-]`, checked at enrollment and rotation), else nil.
    static func registrationToken(_ bytes: [UInt8]) -> String? {
        guard isRegistrationToken(bytes) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `bytes` have docs/protocol.md §1's registration token format: the one check that
    /// enrollment, rotation and every send share.
    public static func isRegistrationToken(_ bytes: [UInt8]) -> Bool {
        !bytes.isEmpty && bytes.count <= maximumRegistrationTokenBytes && bytes.allSatisfy(isTokenByte)
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "."),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }
}

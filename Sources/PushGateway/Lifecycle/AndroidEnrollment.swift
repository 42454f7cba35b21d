import PushCrypto
import PushJSON
import PushKeyAttestation
import PushMetrics
import PushSystem
import Synchronization

/// The Android enrollment transcript of docs/protocol.md §3 (`push-gateway.enroll-android.v1`): the
/// Keystore key is generated with `attestationChallenge = SHA-256(bytes)` (§5a step 4).
struct AndroidEnrollmentTranscript: Equatable {
    static let domain = "push-gateway.enroll-android.v1"
    static let path = "/v1/installations/android"

    let bytes: [UInt8]

    init(
        origin: String, challengeID: String, challenge: String, appProfile: String, endpoint: String,
        endpointEpoch: Int64, expiresAt: Int64
    ) {
        var writer = JSONWriter(prefix: Array((Self.domain + "\n").utf8))
        writer.beginObject()
        writer.member("v", 1)
        writer.member("audience", origin + Self.path)
        writer.member("challenge_id", challengeID)
        writer.member("challenge", challenge)
        writer.member("app_profile", appProfile)
        writer.member("endpoint", endpoint)
        writer.member("endpoint_epoch", endpointEpoch)
        writer.member("expires_at", expiresAt)
        writer.endObject()
        bytes = writer.bytes
    }

    /// The `attestationChallenge` the key must carry.
    var attestationChallenge: [UInt8] { SHA256.hash(bytes) }
}

/// `push_gateway_android_attestations_total{result}` (docs/protocol.md §9): `ok` or the closed §5a
/// failure class of every chain the Android enrollment route verified.
enum AndroidAttestationResult: MetricLabel {
    case ok
    case refused(KeyAttestationFailure)

    static let allCases: [AndroidAttestationResult] = [.ok] + KeyAttestationFailure.allCases.map(Self.refused)

    init?(rawValue: String) {
        if rawValue == "ok" {
            self = .ok
        } else if let failure = KeyAttestationFailure(rawValue: rawValue) {
            self = .refused(failure)
        } else {
            return nil
        }
    }

    var rawValue: String {
        switch self {
        case .ok: "ok"
        case .refused(let failure): failure.rawValue
        }
    }
}

/// The Key Attestation status list the Android enrollment route checks (docs/protocol.md §5a step 3):
/// read from `PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_FILE` at start and again when an enrollment
/// finds the last read an hour old; a failed read keeps the last good list. A list older than 24
/// hours, or none, is not usable (§4.2a answers 503). The URL source is not fetched by this build
/// (docs/decisions/0452), so it never has a list.
final class KeyAttestationStatusSource: Sendable {
    static let rereadIntervalSeconds: Int64 = 3600

    private struct State {
        var list: KeyAttestationStatusList?
        /// When the file was last read (successfully or not).
        var lastAttempt: Int64
    }

    private let file: String?
    private let logger: Logger
    private let state: Mutex<State>

    init(source: GatewayConfiguration.AndroidSettings.StatusListSource, now: Int64, logger: Logger) {
        self.logger = logger
        if case .file(let path) = source { file = path } else { file = nil }
        state = Mutex(State(list: nil, lastAttempt: now))
        if let file { store(Self.read(file, at: now, logger: logger)) }
    }

    /// The list when it is at most 24 hours old at `now`, after a re-read that is due.
    func usableList(at now: Int64) -> KeyAttestationStatusList? {
        if let file, claimReread(at: now) {
            store(Self.read(file, at: now, logger: logger))
        }
        return try? state.withLock { $0.list }?.usable(at: now)
    }

    /// Seconds since the current list was read; nil when there is none
    /// (`push_gateway_android_status_list_age_seconds`).
    func ageSeconds(at now: Int64) -> Int64? {
        state.withLock { $0.list }?.ageSeconds(at: now)
    }

    /// True for exactly one caller once a re-read is due.
    private func claimReread(at now: Int64) -> Bool {
        state.withLock { state in
            guard now - state.lastAttempt >= Self.rereadIntervalSeconds else { return false }
            state.lastAttempt = now
            return true
        }
    }

    private func store(_ list: KeyAttestationStatusList?) {
        guard let list else { return }
        state.withLock { $0.list = list }
    }

    private static func read(_ path: String, at now: Int64, logger: Logger) -> KeyAttestationStatusList? {
        do {
            return try KeyAttestationStatusList.read(fromFile: path, at: now)
        } catch {
            logger.warning(
                "the Key Attestation status list file could not be used; keeping the last good list",
                ["reason": .string(error.rawValue)])
            return nil
        }
    }
}

/// What the Android enrollment route verifies with (docs/protocol.md §4.2a, §5a).
struct AndroidEnrollment: Sendable {
    /// nil when the built-in Google roots fail their integrity check; Android enrollment then answers 503.
    let verifier: KeyAttestationVerifier?
    let statusList: KeyAttestationStatusSource

    init(configuration: GatewayConfiguration, now: Int64, logger: Logger) {
        var verifier = try? KeyAttestationVerifier.google()
        if let root = configuration.android.extraRootDER {
            verifier = try? verifier?.trusting(root: root)
        }
        if verifier == nil {
            logger.error("no usable Key Attestation roots; Android enrollment answers 503")
        }
        if configuration.androidStatusListUnfetched {
            logger.warning(
                "the Key Attestation status list URL is not fetched by this build; Android enrollment answers 503 "
                    + "until PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_FILE names a mirror of it")
        }
        self.verifier = verifier
        statusList = KeyAttestationStatusSource(
            source: configuration.android.statusListSource, now: now, logger: logger)
    }
}

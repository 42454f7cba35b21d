import PushDelivery
import PushKeyAttestation
import PushMetrics

// docs/protocol.md §9: label values come from closed sets only.

/// The class of an HTTP status code.
public enum HTTPStatusClass: String, MetricLabel {
    case success = "2xx"
    case redirection = "3xx"
    case clientError = "4xx"
    case serverError = "5xx"

    /// Anything outside 2xx–4xx counts as a server error (the gateway sends no 1xx).
    public init(status: Int) {
        switch status {
        case 200..<300: self = .success
        case 300..<400: self = .redirection
        case 400..<500: self = .clientError
        default: self = .serverError
        }
    }
}

/// How a delivery request (docs/protocol.md §4.7) ended, one per answered request: the response's
/// outcome name.
public enum DeliveryAdmissionResult: String, MetricLabel {
    /// APNs accepted the notification (200).
    case accepted
    /// Grant, authority, replay, expiry or quota failure (404 `invalid_grant`).
    case invalidGrant = "invalid_grant"
    /// The per-relay bucket was empty (429).
    case rateLimited = "rate_limited"
    /// NIP-98 failed (401 `invalid_auth`).
    case invalidAuth = "invalid_auth"
    /// The endpoint is dead (410 `invalid_endpoint`), from APNs or from the stored marker.
    case invalidEndpoint = "invalid_endpoint"
    /// A transient APNs outcome (503 `retry`).
    case retry
    /// APNs credentials or token/topic mismatch (503 `configuration_fault`).
    case configurationFault = "configuration_fault"
    /// Malformed body or an APNs answer the relay cannot fix by retrying (400 `invalid_request`).
    case invalidRequest = "invalid_request"
    /// The admission transaction could not run (503 `temporarily_unavailable`).
    case temporarilyUnavailable = "temporarily_unavailable"
}

// The `outcome` label of `push_gateway_apns_requests_total` and `push_gateway_fcm_requests_total`
// (docs/protocol.md §4.7 outcome table, §8, §8a).
extension PushRequestOutcome: MetricLabel {}

/// Timed stages of request handling.
public enum RequestStage: String, MetricLabel {
    /// NIP-98 verification of a delivery (§6).
    case nip98Authentication = "nip98_auth"
    /// The delivery admission transaction (§4.7 steps 1–6), from BEGIN to COMMIT.
    case admissionTransaction = "admission_transaction"
    /// App Attest attestation or assertion verification (§5).
    case appAttestVerification = "app_attest_verification"
    /// The transaction of an App Attest route (§4.2–§4.6).
    case lifecycleTransaction = "lifecycle_transaction"
}

/// How one reaper pass ended (docs/protocol.md §10).
public enum ReaperRunResult: String, MetricLabel {
    /// This replica held the lock and every delete succeeded.
    case ok
    /// A database error ended the pass; the next pass tries again.
    case failed
    /// Another replica held the reaper lock.
    case skipped
}

/// The tables the reaper deletes from (docs/protocol.md §10).
public enum ReaperTable: String, MetricLabel {
    case consumedChallenges = "consumed_challenges"
    case nip98Replays = "nip98_replays"
    case deliveryReservations = "delivery_reservations"
    case endpointQuotaWindows = "endpoint_quota_windows"
    case delegations
    case installations
    case marmotTriggerDigests = "marmot_trigger_digests"
}

/// `push_gateway_android_attestations_total{result}` (docs/protocol.md §9): `ok` or the closed §5a
/// failure class of every chain the Android enrollment route verified.
package enum AndroidAttestationResult: MetricLabel {
    case ok
    case refused(KeyAttestationError.Code)

    package static let allCases: [AndroidAttestationResult] = [.ok] + KeyAttestationError.allCodes.map(Self.refused)

    package init?(rawValue: String) {
        if rawValue == "ok" {
            self = .ok
        } else if let failure = KeyAttestationError.allCodes.first(where: { $0.name == rawValue }) {
            self = .refused(failure)
        } else {
            return nil
        }
    }

    package var rawValue: String {
        switch self {
        case .ok: "ok"
        case .refused(let failure): failure.name
        }
    }
}

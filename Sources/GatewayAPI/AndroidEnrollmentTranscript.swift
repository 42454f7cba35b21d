import PushCrypto
import PushJSON

/// The Android enrollment transcript of docs/protocol.md §3 (`push-gateway.enroll-android.v1`): the
/// Keystore key is generated with `attestationChallenge = SHA-256(bytes)` (§5a step 4).
package struct AndroidEnrollmentTranscript: Equatable {
    static let domain = "push-gateway.enroll-android.v1"
    static let path = "/v1/installations/android"

    let bytes: [UInt8]

    package init(
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
    package var attestationChallenge: [UInt8] { SHA256.hash(bytes) }
}

import Foundation
import PushCrypto
import PushPostgres
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import GatewayLifecycle
@testable import GatewayMetrics
@testable import PushGateway

@Suite(
    "Android installations over HTTP: Key Attestation enrollment and ECDSA proofs (docs/protocol.md §4.2a, §3)",
    .tags(.postgres), .testBodyThreads)
struct AndroidLifecycleTests {
    static let invalidAttestation = #"{"error":"invalid_attestation"}"#

    @Test(
        "android enroll → delegate → rotate → revoke delegation → revoke installation, each proof an ECDSA signature"
    )
    func fullFlow() throws {
        let android = try AndroidLifecycleGateway()
        let gateway = android.lifecycle
        let device = try android.makeDevice()
        let now = gateway.clock.unixSeconds()

        let expiresAt = now + 86_400
        let enrolled = try android.post(
            AndroidLifecycleGateway.path,
            try device.enrollBody(challenge: try gateway.challenge(), expiresAt: expiresAt))
        #expect(enrolled.status == 201, "\(enrolled.bodyText)")
        let handle = try #require(try lifecycleObject(enrolled)["installation_handle"] as? String)
        #expect(
            enrolled.bodyText == #"{"installation_handle":"\#(handle)","endpoint_epoch":1,"expires_at":\#(expiresAt)}"#)
        device.handle = handle
        #expect(android.metrics.androidAttestations.count(.ok) == 1)

        // Stored: platform android, the leaf's key as proof key, no counter, the sealed FCM token.
        let row = try gateway.query(
            """
            SELECT platform, proof_key_id, proof_public_key, proof_counter IS NULL, app_profile, encrypted_endpoint,
                   endpoint_fingerprint, attestation_receipt IS NULL
            FROM installations WHERE handle = $1::uuid
            """, [.text(handle)])
        #expect(try row.string(row: 0, column: 0) == "android")
        #expect(try row.bytes(row: 0, column: 1) == device.device.keyID)
        #expect(try row.bytes(row: 0, column: 2) == device.device.key.publicKey.uncompressedPoint)
        #expect(try row.bool(row: 0, column: 3) == true)
        #expect(try row.string(row: 0, column: 4) == AndroidLifecycleGateway.profile)
        let custody = SealedEnvelope(purpose: .tokenCustody, keyring: Keyring(gateway.configuration.tokenKeys))
        let sealed = try #require(try row.bytes(row: 0, column: 5))
        #expect(custody.open(String(decoding: sealed, as: UTF8.self)) == Array(device.endpoint.utf8))
        #expect(try row.bytes(row: 0, column: 6) == Self.fingerprint(gateway, token: device.endpoint))
        #expect(try row.bool(row: 0, column: 7) == true)
        #expect(!(try gateway.installationsText()).contains(device.endpoint))

        // Delegate with an ECDSA proof.
        let relay = lifecycleRelayKey()
        let delegated = try android.post(
            "/v1/delegations",
            try device.delegateBody(
                challenge: try gateway.challenge(), relay: relay, generation: 1, notBefore: now, expiresAt: now + 3600))
        #expect(delegated.status == 201, "\(delegated.bodyText)")
        let grant = try gateway.grant(delegated)
        #expect(grant.appProfile == AndroidLifecycleGateway.profile && grant.endpointEpoch == 1)

        // Rotate to a new FCM token.
        let newToken = AndroidLifecycleDevice.fcmToken()
        let rotated = try android.post(
            "/v1/installations/endpoint", try device.rotateBody(challenge: try gateway.challenge(), endpoint: newToken))
        #expect(rotated.status == 200, "\(rotated.bodyText)")
        device.epoch = 2
        let afterRotation = try gateway.query(
            "SELECT endpoint_epoch, endpoint_fingerprint FROM installations WHERE handle = $1::uuid", [.text(handle)])
        #expect(try afterRotation.int64(row: 0, column: 0) == 2)
        #expect(try afterRotation.bytes(row: 0, column: 1) == Self.fingerprint(gateway, token: newToken))

        // Delegate again at epoch 2, revoke that delegation, then the installation.
        let again = try android.post(
            "/v1/delegations",
            try device.delegateBody(
                challenge: try gateway.challenge(), relay: relay, generation: 2, notBefore: now, expiresAt: now + 3600))
        #expect(again.status == 201)
        let revokedDelegation = try android.post(
            "/v1/delegations/revoke",
            try device.revokeDelegationBody(challenge: try gateway.challenge(), relay: relay, generation: 2))
        #expect(revokedDelegation.status == 200 && revokedDelegation.bodyText == #"{"status":"revoked"}"#)
        #expect(
            try gateway.query(
                "SELECT revoked_at IS NOT NULL FROM delegations WHERE installation_handle = $1::uuid",
                [.text(handle)]
            ).bool(row: 0, column: 0) == true)
        let revoked = try android.post(
            "/v1/installations/revoke", try device.revokeInstallationBody(challenge: try gateway.challenge()))
        #expect(revoked.status == 200 && revoked.bodyText == #"{"status":"revoked"}"#)
        let tombstone = try gateway.query(
            "SELECT revoked_at IS NOT NULL, endpoint_epoch, proof_counter IS NULL FROM installations WHERE handle = $1::uuid",
            [.text(handle)])
        #expect(try tombstone.bool(row: 0, column: 0) == true)
        #expect(try tombstone.int64(row: 0, column: 1) == 3)
        #expect(try tombstone.bool(row: 0, column: 2) == true)
        // Every challenge used was consumed: enrollment, two delegations, the rotation, the two revocations.
        #expect(try gateway.rowCounts()["consumed_challenges"] == 6)
    }

    @Test("a bad ECDSA signature on each of §4.3–§4.6 answers 401 invalid_attestation and writes nothing")
    func forgedProofs() throws {
        let android = try AndroidLifecycleGateway()
        let gateway = android.lifecycle
        let device = try android.makeDevice()
        try android.enroll(device)
        let now = gateway.clock.unixSeconds()
        let relay = lifecycleRelayKey()
        let delegated = try android.post(
            "/v1/delegations",
            try device.delegateBody(
                challenge: try gateway.challenge(), relay: relay, generation: 1, notBefore: now, expiresAt: now + 3600))
        #expect(delegated.status == 201)
        let before = try gateway.rowCounts()
        let stateBefore = try gateway.installationsText()

        let attempts: [(String, String)] = [
            (
                "/v1/delegations",
                try device.delegateBody(
                    challenge: try gateway.challenge(), relay: relay, generation: 2, notBefore: now,
                    expiresAt: now + 3600, forge: true)
            ),
            (
                "/v1/installations/endpoint",
                try device.rotateBody(
                    challenge: try gateway.challenge(), endpoint: AndroidLifecycleDevice.fcmToken(), forge: true)
            ),
            (
                "/v1/delegations/revoke",
                try device.revokeDelegationBody(
                    challenge: try gateway.challenge(), relay: relay, generation: 1, forge: true)
            ),
            (
                "/v1/installations/revoke",
                try device.revokeInstallationBody(challenge: try gateway.challenge(), forge: true)
            ),
        ]
        for (path, body) in attempts {
            let response = try android.post(path, body)
            #expect(response.status == 401, "\(path)")
            #expect(response.bodyText == Self.invalidAttestation, "\(path)")
        }
        // Another device's genuine signature is no proof for this installation either.
        let other = try android.makeDevice()
        other.handle = device.handle
        let stranger = try android.post(
            "/v1/installations/revoke", try other.revokeInstallationBody(challenge: try gateway.challenge()))
        #expect(stranger.status == 401)
        #expect(try gateway.rowCounts() == before)
        #expect(try gateway.installationsText() == stateBefore)
    }

    @Test("an identical retry with a fresh challenge answers 201 with the stored handle; another token is a 404")
    func idempotentRetry() throws {
        let android = try AndroidLifecycleGateway()
        let gateway = android.lifecycle
        let device = try android.makeDevice()
        let expiresAt = gateway.clock.unixSeconds() + 86_400
        let first = try android.post(
            AndroidLifecycleGateway.path,
            try device.enrollBody(challenge: try gateway.challenge(), expiresAt: expiresAt))
        #expect(first.status == 201)
        let retry = try android.post(
            AndroidLifecycleGateway.path,
            try device.enrollBody(challenge: try gateway.challenge(), expiresAt: expiresAt))
        #expect(retry.status == 201)
        #expect(retry.bodyText == first.bodyText)
        #expect(try gateway.rowCounts()["installations"] == 1)
        #expect(try gateway.rowCounts()["consumed_challenges"] == 2)

        // The same key with another token, or another expiry, is not this enrollment again.
        let otherToken = try android.post(
            AndroidLifecycleGateway.path,
            try device.enrollBody(
                challenge: try gateway.challenge(), expiresAt: expiresAt, endpoint: AndroidLifecycleDevice.fcmToken()))
        #expect(otherToken.status == 404)
        let otherExpiry = try android.post(
            AndroidLifecycleGateway.path,
            try device.enrollBody(challenge: try gateway.challenge(), expiresAt: expiresAt - 1))
        #expect(otherExpiry.status == 404)
        // The same token from another device's key is a live duplicate too.
        let thief = try android.makeDevice()
        let duplicate = try android.post(
            AndroidLifecycleGateway.path,
            try thief.enrollBody(challenge: try gateway.challenge(), expiresAt: expiresAt, endpoint: device.endpoint))
        #expect(duplicate.status == 404)
        #expect(try gateway.rowCounts()["installations"] == 1)
        // A challenge used once is refused the second time, before anything is written.
        let challenge = try gateway.challenge()
        let body = try device.enrollBody(challenge: challenge, expiresAt: expiresAt)
        #expect(try android.post(AndroidLifecycleGateway.path, body).status == 201)
        #expect(try android.post(AndroidLifecycleGateway.path, body).status == 404)
    }

    @Test("each enrollment route takes only its own platform's profiles and endpoint format (400)")
    func platformsStayApart() throws {
        let android = try AndroidLifecycleGateway()
        let gateway = android.lifecycle
        let device = try android.makeDevice()
        let expiresAt = gateway.clock.unixSeconds() + 86_400
        let iosProfile = try android.post(
            AndroidLifecycleGateway.path,
            try device.enrollBody(
                challenge: try gateway.challenge(), expiresAt: expiresAt, profile: LifecycleGateway.profile))
        #expect(iosProfile.status == 400)
        let notFCM = try android.post(
            AndroidLifecycleGateway.path,
            try device.enrollBody(
                challenge: try gateway.challenge(), expiresAt: expiresAt, endpoint: "AB/" + device.endpoint))
        #expect(notFCM.status == 400)
        let iosDevice = try gateway.makeDevice()
        let androidProfileOnIOS = try gateway.post(
            "/v1/installations",
            try iosDevice.enrollBody(
                challenge: try gateway.challenge(), endpoint: iosDevice.endpoint, expiresAt: expiresAt,
                profile: AndroidLifecycleGateway.profile))
        #expect(androidProfileOnIOS.status == 400)
        #expect(try gateway.rowCounts().values.reduce(0, +) == 0)
        #expect(android.metrics.androidAttestations.count(.ok) == 0)
        // Rotation: the installation's platform decides; an FCM token on an iOS installation is a 400.
        try gateway.enroll(iosDevice)
        let fcmOnIOS = try gateway.post(
            "/v1/installations/endpoint",
            try iosDevice.rotateBody(
                challenge: try gateway.challenge(), epoch: 1, endpoint: AndroidLifecycleDevice.fcmToken()))
        #expect(fcmOnIOS.status == 400)
        #expect(try gateway.query("SELECT endpoint_epoch FROM installations").int64(row: 0, column: 0) == 1)
    }

    @Test(
        "an absent or day-old status list answers 503 on Android enrollment before any work; iOS enrollment still works"
    )
    func staleStatusList() throws {
        // No status file: no list at all.
        let absent = try AndroidLifecycleGateway(statusList: nil)
        let device = try absent.makeDevice()
        let gateway = absent.lifecycle
        let response = try absent.post(
            AndroidLifecycleGateway.path,
            try device.enrollBody(challenge: try gateway.challenge(), expiresAt: gateway.clock.unixSeconds() + 3600))
        #expect(response.status == 503 && response.bodyText == #"{"error":"temporarily_unavailable"}"#)
        #expect(try gateway.rowCounts().values.reduce(0, +) == 0)
        #expect(AndroidAttestationResult.allCases.allSatisfy { absent.metrics.androidAttestations.count($0) == 0 })
        try gateway.enroll(try gateway.makeDevice())
        #expect(try gateway.rowCounts()["installations"] == 1)
        // No list, no age sample.
        #expect(
            try !gateway.gateway.get("/metrics").bodyText.contains("\npush_gateway_android_status_list_age_seconds "))

        // A mirror file that still reads well but was last written 25 hours ago: 503 from the start
        // (its age is its modification time's, docs/protocol.md §5a step 3).
        let scratch = try ScratchDirectory()
        let clock = LifecycleTestClock()
        let abandonedFile = try scratch.file("abandoned-status.json", text: #"{"entries":{}}"#)
        try Self.setModificationTime(of: abandonedFile, to: clock.unixSeconds() - 25 * 3600)
        let abandoned = try AndroidLifecycleGateway(clock: clock) {
            $0.with("PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_FILE", abandonedFile)
        }
        let abandonedDevice = try abandoned.makeDevice()
        let unserved = try abandoned.post(
            AndroidLifecycleGateway.path,
            try abandonedDevice.enrollBody(
                challenge: try abandoned.lifecycle.challenge(), expiresAt: clock.unixSeconds() + 3600))
        #expect(unserved.status == 503 && unserved.bodyText == #"{"error":"temporarily_unavailable"}"#)
        #expect(try abandoned.lifecycle.rowCounts()["installations"] == 0)
        #expect(
            try abandoned.lifecycle.gateway.get("/metrics").bodyText.contains(
                "\npush_gateway_android_status_list_age_seconds 90000\n"))

        // A list read at start whose file then breaks: after 24 hours without a good read, 503.
        // The status file lives in a directory of the test's own, which outlives the gateway's start.
        let statusFile = try scratch.file("attestation-status.json", text: #"{"entries":{}}"#)
        try Self.setModificationTime(of: statusFile, to: clock.unixSeconds())
        let stale = try AndroidLifecycleGateway(clock: clock) {
            $0.with("PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_FILE", statusFile)
        }
        let fresh = try stale.makeDevice()
        try stale.enroll(fresh)
        try Data("not a status list".utf8).write(to: URL(fileURLWithPath: statusFile))
        clock.advance(seconds: 86_400 + 1)
        let late = try stale.makeDevice()
        let refused = try stale.post(
            AndroidLifecycleGateway.path,
            try late.enrollBody(challenge: try stale.lifecycle.challenge(), expiresAt: clock.unixSeconds() + 3600))
        #expect(refused.status == 503)
        #expect(try stale.lifecycle.rowCounts()["installations"] == 1)
        let metrics = try stale.lifecycle.gateway.get("/metrics").bodyText
        #expect(metrics.contains("push_gateway_android_status_list_age_seconds 86401"))
        try stale.lifecycle.enroll(try stale.lifecycle.makeDevice())
        #expect(try stale.lifecycle.rowCounts()["installations"] == 2)
        // A good file again, written now by the gateway's clock: the first enrollment an hour after
        // the last read re-reads it and succeeds.
        try Data(#"{"entries":{}}"#.utf8).write(to: URL(fileURLWithPath: statusFile))
        try Self.setModificationTime(of: statusFile, to: clock.unixSeconds())
        clock.advance(seconds: KeyAttestationStatusSource.rereadIntervalSeconds)
        try stale.enroll(late)
        #expect(try stale.lifecycle.rowCounts()["installations"] == 3)
    }

    /// Sets a file's access and modification times (utimes(2)): a status list mirror written at `seconds`.
    static func setModificationTime(of path: String, to seconds: Int64) throws {
        var times = [timeval(tv_sec: Int(seconds), tv_usec: 0), timeval(tv_sec: Int(seconds), tv_usec: 0)]
        guard utimes(path, &times) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// The keyed fingerprint of docs/protocol.md §7 over an FCM token's ASCII bytes.
    static func fingerprint(_ gateway: LifecycleGateway, token: String) -> [UInt8] {
        HMACSHA256.authenticationCode(
            key: gateway.configuration.fingerprintKey.bytes,
            message: Array("push-gateway endpoint v1".utf8) + [0] + Array(AndroidLifecycleGateway.profile.utf8) + [0]
                + Array(token.utf8))
    }
}

import Foundation
import PushCrypto
import PushPostgres
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import PushGateway

@Suite("Installation lifecycle over HTTP: enroll, delegate, rotate, revoke", .tags(.postgres), .testBodyThreads)
struct LifecycleFlowTests {
    /// HMAC-SHA-256(fingerprint key, `push-gateway endpoint v1` ‖ 0 ‖ profile ‖ 0 ‖ token), computed
    /// here from docs/protocol.md §7 rather than through the gateway's fingerprinter.
    static func expectedFingerprint(_ gateway: LifecycleGateway, token: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticationCode(
            key: gateway.configuration.fingerprintKey.bytes,
            message: Array("push-gateway endpoint v1".utf8) + [0] + Array(LifecycleGateway.profile.utf8) + [0] + token)
    }

    /// Checks the stored endpoint: opens under the token keyring to `token`, the fingerprint is the
    /// keyed HMAC, and neither the token bytes nor their hex appear anywhere in the row.
    static func expectStoredEndpoint(_ gateway: LifecycleGateway, handle: String, token: String) throws {
        let row = try gateway.query(
            "SELECT encrypted_endpoint, endpoint_fingerprint FROM installations WHERE handle = $1::uuid",
            [.text(handle)])
        let encrypted = try #require(try row.bytes(row: 0, column: 0))
        let tokenBytes = try #require(Hex.decode(token, lowercaseOnly: true))
        let custody = SealedEnvelope(purpose: .tokenCustody, keyring: Keyring(gateway.configuration.tokenKeys))
        #expect(custody.open(String(decoding: encrypted, as: UTF8.self)) == tokenBytes)
        #expect(try row.bytes(row: 0, column: 1) == expectedFingerprint(gateway, token: tokenBytes))
        let rowText = try gateway.installationsText()
        #expect(!rowText.contains(token))
        let raw = try gateway.query(
            "SELECT position($1::bytea IN encrypted_endpoint) + position($1::bytea IN endpoint_fingerprint) "
                + "+ position($1::bytea IN app_attest_public_key) + position($1::bytea IN app_attest_key_id) "
                + "+ coalesce(position($1::bytea IN attestation_receipt), 0) FROM installations", [.bytes(tokenBytes)])
        #expect(try raw.int64(row: 0, column: 0) == 0)
    }

    @Test(
        "challenge → enroll → delegate → rotate → revoke delegation → revoke installation, with the rows after each step"
    )
    func fullFlow() throws {
        let gateway = try LifecycleGateway()
        let device = try gateway.makeDevice()
        let now = gateway.clock.unixSeconds()

        // Enroll.
        let expiresAt = now + 86_400
        let enrollChallenge = try gateway.challenge()
        #expect(try gateway.rowCounts().values.reduce(0, +) == 0)
        let enrolled = try gateway.post(
            "/v1/installations",
            try device.enrollBody(challenge: enrollChallenge, endpoint: device.endpoint, expiresAt: expiresAt))
        #expect(enrolled.status == 201)
        #expect(enrolled.header("Content-Type") == "application/json; charset=utf-8")
        let handle = try #require(try lifecycleObject(enrolled)["installation_handle"] as? String)
        #expect(CanonicalUUID(handle)?.version == 4)
        #expect(
            enrolled.bodyText == #"{"installation_handle":"\#(handle)","endpoint_epoch":1,"expires_at":\#(expiresAt)}"#)
        device.handle = handle
        let installation = try gateway.query(
            "SELECT app_attest_key_id, app_attest_public_key, assertion_counter, app_profile, endpoint_epoch, "
                + "revoked_at IS NULL, floor(extract(epoch FROM expires_at))::bigint, attestation_receipt "
                + "FROM installations WHERE handle = $1::uuid", [.text(handle)])
        #expect(installation.rowCount == 1)
        #expect(try installation.bytes(row: 0, column: 0) == device.device.keyID)
        #expect(try installation.bytes(row: 0, column: 1) == device.device.key.publicKey.uncompressedPoint)
        #expect(try installation.int64(row: 0, column: 2) == 0)
        #expect(try installation.string(row: 0, column: 3) == LifecycleGateway.profile)
        #expect(try installation.int64(row: 0, column: 4) == 1)
        #expect(try installation.bool(row: 0, column: 5) == true)
        #expect(try installation.int64(row: 0, column: 6) == expiresAt)
        #expect(try installation.bytes(row: 0, column: 7) == Array("synthetic receipt".utf8))
        try Self.expectStoredEndpoint(gateway, handle: handle, token: device.endpoint)
        let consumed = try gateway.query("SELECT challenge_id::text FROM consumed_challenges")
        #expect(consumed.rowCount == 1)
        #expect(try consumed.string(row: 0, column: 0) == enrollChallenge.id)

        // Delegate.
        let relay = lifecycleRelayKey()
        let delegated = try gateway.delegate(device, relay: relay, generation: 1)
        #expect(delegated.status == 201)
        let grantText = try #require(try lifecycleObject(delegated)["endpoint_grant"] as? String)
        #expect(delegated.bodyText == #"{"endpoint_grant":"\#(grantText)"}"#)
        #expect(grantText.hasPrefix("g1."))
        let grant = try #require(
            EndpointGrant.open(
                grantText,
                with: SealedEnvelope(purpose: .endpointGrant, keyring: Keyring(gateway.configuration.grantKeys))))
        #expect(grant.relayPublicKey == Hex.decode(relay, lowercaseOnly: true))
        #expect(grant.appProfile == LifecycleGateway.profile)
        #expect(grant.endpointEpoch == 1 && grant.generation == 1)
        #expect(grant.expiresAt == now + 3600)
        let delegation = try gateway.query(
            "SELECT delegation_id::text, generation, endpoint_epoch, floor(extract(epoch FROM not_before))::bigint, "
                + "floor(extract(epoch FROM expires_at))::bigint, revoked_at IS NULL FROM delegations "
                + "WHERE installation_handle = $1::uuid AND relay_pubkey = $2",
            [.text(handle), .bytes(Hex.decode(relay, lowercaseOnly: true)!)])
        #expect(delegation.rowCount == 1)
        #expect(try delegation.string(row: 0, column: 0) == grant.delegationID.text)
        #expect(try delegation.int64(row: 0, column: 1) == 1)
        #expect(try delegation.int64(row: 0, column: 2) == 1)
        #expect(try delegation.int64(row: 0, column: 3) == now)
        #expect(try delegation.int64(row: 0, column: 4) == now + 3600)
        #expect(try delegation.bool(row: 0, column: 5) == true)
        #expect(try Self.counter(gateway, handle) == 1)

        // Rotate to a new token: the epoch steps to 2, so the epoch-1 grant no longer matches.
        let newToken = Hex.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
        let rotated = try gateway.post(
            "/v1/installations/endpoint",
            try device.rotateBody(challenge: try gateway.challenge(), epoch: 1, endpoint: newToken))
        #expect(rotated.status == 200)
        #expect(rotated.bodyText == #"{"status":"rotated"}"#)
        device.epoch = 2
        #expect(try Self.epoch(gateway, handle) == 2)
        #expect(try Self.counter(gateway, handle) == 2)
        try Self.expectStoredEndpoint(gateway, handle: handle, token: newToken)
        #expect(!(try gateway.installationsText().contains(device.endpoint)))
        #expect(grant.endpointEpoch != (try Self.epoch(gateway, handle)))

        // A delegation at the new epoch needs a higher generation; it replaces the row.
        #expect(try gateway.delegate(device, relay: relay, generation: 1).status == 404)
        let second = try gateway.delegate(device, relay: relay, generation: 2)
        #expect(second.status == 201)
        let secondGrant = try gateway.grant(second)
        #expect(secondGrant.endpointEpoch == 2 && secondGrant.generation == 2)
        #expect(secondGrant.delegationID != grant.delegationID)
        let replaced = try gateway.query(
            "SELECT delegation_id::text, generation, endpoint_epoch FROM delegations WHERE installation_handle = $1::uuid",
            [.text(handle)])
        #expect(replaced.rowCount == 1)
        #expect(try replaced.string(row: 0, column: 0) == secondGrant.delegationID.text)
        #expect(try replaced.int64(row: 0, column: 1) == 2 && replaced.int64(row: 0, column: 2) == 2)

        // Revoke the delegation, twice (idempotent); the replaced generation is a 404.
        for _ in 0..<2 {
            let revoked = try gateway.post(
                "/v1/delegations/revoke",
                try device.revokeDelegationBody(challenge: try gateway.challenge(), relay: relay, generation: 2))
            #expect(revoked.status == 200)
            #expect(revoked.bodyText == #"{"status":"revoked"}"#)
        }
        let stale = try gateway.post(
            "/v1/delegations/revoke",
            try device.revokeDelegationBody(challenge: try gateway.challenge(), relay: relay, generation: 1))
        #expect(stale.status == 404)
        #expect(
            try gateway.query("SELECT count(*) FROM delegations WHERE revoked_at IS NOT NULL").int64(row: 0, column: 0)
                == 1)

        // Revoke the installation: tombstone at epoch 3, every delegation revoked; a retry is a 200.
        let otherRelay = lifecycleRelayKey()
        #expect(try gateway.delegate(device, relay: otherRelay, generation: 1).status == 201)
        for _ in 0..<2 {
            let revoked = try gateway.post(
                "/v1/installations/revoke",
                try device.revokeInstallationBody(challenge: try gateway.challenge(), epoch: 2))
            #expect(revoked.status == 200)
            #expect(revoked.bodyText == #"{"status":"revoked"}"#)
        }
        let tombstone = try gateway.query(
            "SELECT revoked_at IS NOT NULL, endpoint_epoch FROM installations WHERE handle = $1::uuid", [.text(handle)])
        #expect(try tombstone.bool(row: 0, column: 0) == true)
        #expect(try tombstone.int64(row: 0, column: 1) == 3)
        #expect(
            try gateway.query("SELECT count(*) FROM delegations WHERE revoked_at IS NULL").int64(row: 0, column: 0) == 0
        )
        #expect(try gateway.delegate(device, relay: otherRelay, generation: 2, epoch: 3).status == 404)
        #expect(try gateway.delegate(device, relay: otherRelay, generation: 2, epoch: 2).status == 404)
        // Every accepted request consumed exactly its own challenge.
        #expect(try gateway.rowCounts()["consumed_challenges"] == 9)
    }

    static func counter(_ gateway: LifecycleGateway, _ handle: String) throws -> Int64? {
        try gateway.query("SELECT assertion_counter FROM installations WHERE handle = $1::uuid", [.text(handle)])
            .int64(row: 0, column: 0)
    }

    static func epoch(_ gateway: LifecycleGateway, _ handle: String) throws -> Int64? {
        try gateway.query("SELECT endpoint_epoch FROM installations WHERE handle = $1::uuid", [.text(handle)])
            .int64(row: 0, column: 0)
    }

    @Test(
        "an identical enrollment retried with a fresh challenge answers 201 with the same handle; a used challenge is 404"
    )
    func idempotentEnrollment() throws {
        let gateway = try LifecycleGateway()
        let device = try gateway.makeDevice()
        let expiresAt = gateway.clock.unixSeconds() + 3600
        let first = try gateway.post(
            "/v1/installations",
            try device.enrollBody(challenge: try gateway.challenge(), endpoint: device.endpoint, expiresAt: expiresAt))
        let used = try gateway.challenge()
        let retryBody = try device.enrollBody(challenge: used, endpoint: device.endpoint, expiresAt: expiresAt)
        let retry = try gateway.post("/v1/installations", retryBody)
        #expect(first.status == 201 && retry.status == 201)
        #expect(first.body == retry.body)
        #expect(try gateway.rowCounts()["installations"] == 1)
        #expect(try gateway.rowCounts()["consumed_challenges"] == 2)
        let again = try gateway.post("/v1/installations", retryBody)
        #expect(again.status == 404 && again.bodyText == #"{"error":"not_authorized"}"#)

        // Another expiry is not the same enrollment: the live key id is a duplicate.
        let different = try gateway.post(
            "/v1/installations",
            try device.enrollBody(
                challenge: try gateway.challenge(), endpoint: device.endpoint, expiresAt: expiresAt + 1))
        #expect(different.status == 404)
        #expect(try gateway.rowCounts()["consumed_challenges"] == 2)
    }

    @Test("a live key id or token cannot enroll twice; after revocation or expiry both may enroll again")
    func enrollmentUniqueness() throws {
        let gateway = try LifecycleGateway()
        let first = try gateway.makeDevice()
        try gateway.enroll(first, expiresIn: 600)
        // Same key, other token → 404; other key, same token → 404.
        #expect(throws: TestSupportError.self) { try gateway.enroll(first, endpoint: Hex.encode([1, 2, 3, 4])) }
        let second = try gateway.makeDevice()
        #expect(throws: TestSupportError.self) { try gateway.enroll(second, endpoint: first.endpoint) }
        #expect(try gateway.rowCounts()["installations"] == 1)

        // Revoked: the key and the token enroll again; the tombstone stays.
        let revoked = try gateway.post(
            "/v1/installations/revoke", try first.revokeInstallationBody(challenge: try gateway.challenge(), epoch: 1))
        #expect(revoked.status == 200)
        let again = try gateway.enroll(second, endpoint: first.endpoint, expiresIn: 600)
        #expect(again != first.handle)
        #expect(try gateway.rowCounts()["installations"] == 2)

        // Expired but not yet reaped: the enrollment deletes it and succeeds.
        gateway.clock.advance(seconds: 601)
        let third = try gateway.makeDevice()
        try gateway.enroll(third, endpoint: first.endpoint)
        // The expired installation and the expired tombstone holding that token are gone.
        let remaining = try gateway.query("SELECT handle::text FROM installations")
        #expect(remaining.rowCount == 1)
        #expect(try remaining.string(row: 0, column: 0) == third.handle)
        #expect(third.handle != again)
    }

    @Test("rotation to the token of another live installation of the profile is a 404 and changes nothing")
    func rotationToAnotherInstallationsToken() throws {
        let gateway = try LifecycleGateway()
        let first = try gateway.makeDevice()
        let second = try gateway.makeDevice()
        try gateway.enroll(first)
        try gateway.enroll(second)
        let before = try gateway.installationsText()
        let refused = try gateway.post(
            "/v1/installations/endpoint",
            try first.rotateBody(challenge: try gateway.challenge(), epoch: 1, endpoint: second.endpoint))
        #expect(refused.status == 404 && refused.bodyText == #"{"error":"not_authorized"}"#)
        #expect(try gateway.installationsText() == before)
        #expect(try gateway.rowCounts()["consumed_challenges"] == 2)
        // The same assertion counter was never stored, so a fresh rotation with a new token works.
        let fresh = Hex.encode([0xab, 0xcd])
        let rotated = try gateway.post(
            "/v1/installations/endpoint",
            try first.rotateBody(challenge: try gateway.challenge(), epoch: 1, endpoint: fresh))
        #expect(rotated.status == 200)
    }

    @Test("a delegation never outlives its installation and generations only increase")
    func delegationRules() throws {
        let gateway = try LifecycleGateway()
        let device = try gateway.makeDevice()
        try gateway.enroll(device, expiresIn: 5000)
        let relay = lifecycleRelayKey()
        #expect(try gateway.delegate(device, relay: relay, generation: 1, expiresIn: 5001).status == 404)
        #expect(try gateway.delegate(device, relay: relay, generation: 5, expiresIn: 5000).status == 201)
        #expect(try gateway.delegate(device, relay: relay, generation: 5).status == 404)
        #expect(try gateway.delegate(device, relay: relay, generation: 4).status == 404)
        // A revoked generation still counts as the highest one.
        let revoked = try gateway.post(
            "/v1/delegations/revoke",
            try device.revokeDelegationBody(challenge: try gateway.challenge(), relay: relay, generation: 5))
        #expect(revoked.status == 200)
        #expect(try gateway.delegate(device, relay: relay, generation: 5).status == 404)
        #expect(try gateway.delegate(device, relay: relay, generation: 6).status == 201)
        let row = try gateway.query("SELECT generation, revoked_at IS NULL FROM delegations")
        #expect(try row.int64(row: 0, column: 0) == 6 && row.bool(row: 0, column: 1) == true)
        // Another relay has its own generations.
        #expect(try gateway.delegate(device, relay: lifecycleRelayKey(), generation: 1).status == 201)
    }

    @Test(
        "a correctly asserted delegation with not_before -2^63 or -10^15 is 400 invalid_request, never 503",
        arguments: [Int64.min, -1_000_000_000_000_000])
    func notBeforeOutsideUnixTimeRange(notBefore: Int64) throws {
        let gateway = try LifecycleGateway()
        let device = try gateway.makeDevice()
        try gateway.enroll(device)
        let before = try gateway.rowCounts()
        let response = try gateway.post(
            "/v1/delegations",
            try device.delegateBody(
                challenge: try gateway.challenge(), epoch: 1, generation: 1, relay: lifecycleRelayKey(),
                notBefore: notBefore, expiresAt: gateway.clock.unixSeconds() + 60))
        #expect(response.status == 400 && response.bodyText == #"{"error":"invalid_request"}"#)
        #expect(try gateway.rowCounts() == before)
        #expect(try Self.counter(gateway, try #require(device.handle)) == 0)
    }

    @Test("a bad assertion on a live installation is 401 invalid_attestation and writes nothing")
    func badAssertion() throws {
        let gateway = try LifecycleGateway()
        let device = try gateway.makeDevice()
        try gateway.enroll(device)
        let impostor = try gateway.makeDevice()
        impostor.handle = device.handle
        let before = try gateway.rowCounts()
        let now = gateway.clock.unixSeconds()
        let forged = try gateway.post(
            "/v1/delegations",
            try impostor.delegateBody(
                challenge: try gateway.challenge(), epoch: 1, generation: 1, relay: lifecycleRelayKey(),
                notBefore: now, expiresAt: now + 60))
        #expect(forged.status == 401 && forged.bodyText == #"{"error":"invalid_attestation"}"#)
        // A counter that does not advance is the same 401.
        let replayed = try gateway.post(
            "/v1/delegations",
            try device.delegateBody(
                challenge: try gateway.challenge(), epoch: 1, generation: 1, relay: lifecycleRelayKey(),
                notBefore: now, expiresAt: now + 60, counter: 0))
        #expect(replayed.status == 401 && replayed.bodyText == #"{"error":"invalid_attestation"}"#)
        #expect(try gateway.rowCounts() == before)
        #expect(try Self.counter(gateway, try #require(device.handle)) == 0)
    }

    @Test("an attestation for another app or signed over another transcript is 401 and writes nothing")
    func badAttestation() throws {
        let gateway = try LifecycleGateway()
        let stranger = LifecycleDevice(device: try gateway.authority.makeDevice(appID: "ZZZZZ99999.other.app"))
        let expiresAt = gateway.clock.unixSeconds() + 600
        let wrongApp = try gateway.post(
            "/v1/installations",
            try stranger.enrollBody(
                challenge: try gateway.challenge(), endpoint: stranger.endpoint, expiresAt: expiresAt))
        #expect(wrongApp.status == 401 && wrongApp.bodyText == #"{"error":"invalid_attestation"}"#)
        let device = try gateway.makeDevice()
        // Signed for another origin: the audience differs from the gateway's.
        let wrongAudience = try gateway.post(
            "/v1/installations",
            try device.enrollBody(
                challenge: try gateway.challenge(), endpoint: device.endpoint, expiresAt: expiresAt,
                origin: "https://other.example"))
        #expect(wrongAudience.status == 401)
        #expect(try gateway.rowCounts().values.reduce(0, +) == 0)
    }

    @Test("an unreachable database answers 503 temporarily_unavailable, never a 500")
    func databaseUnavailable() throws {
        let gateway = try LifecycleGateway(databaseURL: "postgresql://nobody@127.0.0.1:1/none")
        let device = try gateway.makeDevice()
        let enrolled = try gateway.post(
            "/v1/installations",
            try device.enrollBody(
                challenge: try gateway.challenge(), endpoint: device.endpoint,
                expiresAt: gateway.clock.unixSeconds() + 600))
        #expect(enrolled.status == 503 && enrolled.bodyText == #"{"error":"temporarily_unavailable"}"#)
        device.handle = CanonicalUUID.init("0b9d6d0e-34d9-4a26-9f0b-6a1c2b3d4e5f")?.text
        let delegated = try gateway.delegate(device, relay: lifecycleRelayKey(), generation: 1)
        #expect(delegated.status == 503 && delegated.bodyText == #"{"error":"temporarily_unavailable"}"#)
    }
}

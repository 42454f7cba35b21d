import Foundation
import PushCrypto
import PushKeyAttestation
import PushTestSupport
import Testing

@testable import PushGateway

/// docs/protocol.md §5a: every rule broken alone, on an otherwise genuine synthetic device, is
/// `401 invalid_attestation` on `POST /v1/installations/android`, writes nothing, and moves its
/// class of `push_gateway_android_attestations_total`.
@Suite("Android enrollment refuses a chain that breaks any one rule of §5a", .tags(.postgres), .testBodyThreads)
struct AndroidEnrollmentRefusalTests {
    /// A serial the gateway's status list names (`revoked`).
    static let revokedSerial = 0x5151

    /// One broken property: the failure class it must produce and how the request breaks it.
    struct Case: CustomStringConvertible, Sendable {
        let failure: KeyAttestationError.Code
        let breaks: String
        /// The body for `device`, given the challenge and expiry.
        let body:
            @Sendable (AndroidLifecycleDevice, SyntheticKeyAttestationAuthority, LifecycleChallenge, Int64) throws ->
                String

        var description: String { "\(failure.name): \(breaks)" }
    }

    static func altered(
        _ failure: KeyAttestationError.Code, _ breaks: String,
        _ alter: @escaping @Sendable (inout SyntheticKeyDescription) -> Void
    ) -> Case {
        Case(failure: failure, breaks: breaks) { device, _, challenge, expiresAt in
            try device.enrollBody(challenge: challenge, expiresAt: expiresAt, alter: alter)
        }
    }

    /// The genuine leaf of `device` for `challenge`, issued by `authority` with `validity` when given.
    static func leaf(
        _ device: AndroidLifecycleDevice, by authority: SyntheticKeyAttestationAuthority, challenge: LifecycleChallenge,
        expiresAt: Int64, extensionPresent: Bool = true, validity: (Int64, Int64)? = nil
    ) throws -> X509Certificate {
        let transcript = device.transcript(challenge: challenge, endpoint: device.endpoint, expiresAt: expiresAt)
        let description = AndroidLifecycleDevice.genuineDescription(challenge: transcript.attestationChallenge)
        return try authority.issueLeaf(
            subjectPublicKeyInfoDER: device.device.key.publicKey.subjectPublicKeyInfoDER,
            extensionValue: extensionPresent ? description.encoded : nil, notBefore: validity?.0,
            notAfter: validity?.1)
    }

    static let cases: [Case] = [
        Case(failure: .format, breaks: "the intermediate is not a DER certificate") {
            device, authority, challenge, expiresAt in
            let leaf = try leaf(device, by: authority, challenge: challenge, expiresAt: expiresAt)
            return try device.enrollBody(
                challenge: challenge, expiresAt: expiresAt,
                chain: [leaf.derEncoded, [0x30, 0x03, 0x02, 0x01, 0x01], authority.root.derEncoded])
        },
        Case(failure: .chain, breaks: "the leaf is signed by another authority's intermediate") {
            device, authority, challenge, expiresAt in
            let stranger = try SyntheticKeyAttestationAuthority()
            let leaf = try leaf(device, by: stranger, challenge: challenge, expiresAt: expiresAt)
            return try device.enrollBody(
                challenge: challenge, expiresAt: expiresAt, chain: authority.chain(leaf: leaf))
        },
        Case(
            failure: .chain,
            breaks: "the chain extension attack: another phone's attested key certifies this key with forged claims"
        ) { device, authority, challenge, expiresAt in
            let transcript = device.transcript(challenge: challenge, endpoint: device.endpoint, expiresAt: expiresAt)
            var honest = AndroidLifecycleDevice.genuineDescription(challenge: SHA256.hash(Array("any".utf8)))
            honest.packages = [("xyz.attacker.app", 1)]
            honest.deviceLocked = false
            let forged = AndroidLifecycleDevice.genuineDescription(challenge: transcript.attestationChallenge)
            let chain = try authority.makeDevice().certifying(
                device.device.key.publicKey, forged: forged, honest: honest)
            return try device.enrollBody(challenge: challenge, expiresAt: expiresAt, chain: chain)
        },
        Case(failure: .root, breaks: "the whole chain comes from an authority the gateway does not trust") {
            device, _, challenge, expiresAt in
            let stranger = try SyntheticKeyAttestationAuthority()
            let leaf = try leaf(device, by: stranger, challenge: challenge, expiresAt: expiresAt)
            return try device.enrollBody(challenge: challenge, expiresAt: expiresAt, chain: stranger.chain(leaf: leaf))
        },
        Case(
            failure: .chain,
            breaks: "ten RSA-3072 keys with 3071-bit exponents (each check as dear as a private-key operation)"
        ) { device, authority, challenge, expiresAt in
            let transcript = device.transcript(challenge: challenge, endpoint: device.endpoint, expiresAt: expiresAt)
            let signer = try X509SigningKey.rsa(bits: 3072)
            let chain = try SyntheticCostlyChains.chain(
                count: 10,
                subjectPublicKeyInfoDER: SyntheticCostlyChains.rsaSubjectPublicKeyInfo(
                    modulusOf: signer, exponentBits: 3071),
                signer: signer,
                leafExtension: AndroidLifecycleDevice.genuineDescription(challenge: transcript.attestationChallenge)
                    .encoded, notBefore: authority.notBefore, notAfter: authority.notAfter)
            return try device.enrollBody(challenge: challenge, expiresAt: expiresAt, chain: chain)
        },
        Case(failure: .time, breaks: "the intermediate of an RKP-style chain expired yesterday") {
            device, authority, challenge, expiresAt in
            let now = Int64(Date().timeIntervalSince1970)
            let expired = try authority.reissuingIntermediate(notBefore: now - 30 * 86_400, notAfter: now - 86_400)
            let leaf = try leaf(
                device, by: expired, challenge: challenge, expiresAt: expiresAt, validity: (now - 60, now + 86_400))
            return try device.enrollBody(challenge: challenge, expiresAt: expiresAt, chain: expired.chain(leaf: leaf))
        },
        Case(failure: .revoked, breaks: "the leaf's serial is on the status list") { device, _, challenge, expiresAt in
            try device.enrollBody(challenge: challenge, expiresAt: expiresAt, serialNumber: revokedSerial)
        },
        Case(failure: .extension, breaks: "the leaf has no KeyDescription") { device, authority, challenge, expiresAt in
            let leaf = try leaf(
                device, by: authority, challenge: challenge, expiresAt: expiresAt, extensionPresent: false)
            return try device.enrollBody(challenge: challenge, expiresAt: expiresAt, chain: authority.chain(leaf: leaf))
        },
        altered(.version, "attestationVersion 2") { $0.attestationVersion = 2 },
        altered(.securityLevel, "a Software attestation security level") { $0.attestationSecurityLevel = 0 },
        altered(.challenge, "the challenge of another transcript") { $0.challenge = SHA256.hash(Array("other".utf8)) },
        altered(.origin, "an imported key") { $0.origin = 2 },
        altered(.purpose, "a key that can only verify") { $0.purposes = [3] },
        altered(.key, "an RSA key description") { $0.algorithm = 1 },
        altered(.bootState, "an unverified boot") { $0.verifiedBootState = 2 },
        altered(.package, "another package") { $0.packages = [("xyz.other.app", 1)] },
        altered(.signingCert, "another signing certificate") {
            $0.signatureDigests = [SHA256.hash(Array("other signer".utf8))]
        },
    ]

    @Test("each broken rule answers 401, writes nothing and counts its class", arguments: cases)
    func refused(_ broken: Case) throws {
        let android = try AndroidLifecycleGateway(
            statusList: #"{"entries":{"\#(String(Self.revokedSerial, radix: 16))":{"status":"REVOKED"}}}"#)
        let gateway = android.lifecycle
        let device = try android.makeDevice()
        let before = try gateway.rowCounts()
        let body = try broken.body(
            device, android.authority, try gateway.challenge(), gateway.clock.unixSeconds() + 86_400)
        let response = try android.post(AndroidLifecycleGateway.path, body)
        #expect(response.status == 401)
        #expect(response.bodyText == #"{"error":"invalid_attestation"}"#)
        #expect(try gateway.rowCounts() == before)
        #expect(android.metrics.androidAttestations.count(.refused(broken.failure)) == 1)
        #expect(android.metrics.androidAttestations.count(.ok) == 0)
        // The same device with a genuine chain enrolls, so only the broken property was at fault.
        try android.enroll(device)
        #expect(android.metrics.androidAttestations.count(.ok) == 1)
    }

    @Test(
        "a profile that asks for StrongBox refuses a TEE key; one that pins a verified boot key enrolls a SelfSigned boot with that key only"
    )
    func profileRequirements() throws {
        let strongbox = try AndroidLifecycleGateway {
            $0.with("PUSH_GATEWAY_PROFILE_BUZZ_ANDROID_ANDROID_MIN_SECURITY_LEVEL", "strongbox")
        }
        let tee = try strongbox.makeDevice()
        let refused = try strongbox.post(
            AndroidLifecycleGateway.path,
            try tee.enrollBody(
                challenge: try strongbox.lifecycle.challenge(), expiresAt: strongbox.lifecycle.clock.unixSeconds() + 60)
        )
        #expect(refused.status == 401)
        #expect(strongbox.metrics.androidAttestations.count(.refused(.securityLevel)) == 1)

        // The verified boot key fingerprint an alternative OS (e.g. GrapheneOS) publishes for a device.
        let pinnedKey = SHA256.hash(Array("an alternative OS's verified boot key".utf8))
        let pinning = try AndroidLifecycleGateway {
            $0.with(
                "PUSH_GATEWAY_PROFILE_BUZZ_ANDROID_ANDROID_VERIFIED_BOOT_KEYS",
                Hex.encode(SHA256.hash(pinnedKey)) + "," + Hex.encode(pinnedKey).uppercased())
        }
        func enroll(state: Int64, key: [UInt8]) throws -> HTTPTestResponse {
            let device = try pinning.makeDevice()
            return try pinning.post(
                AndroidLifecycleGateway.path,
                try device.enrollBody(
                    challenge: try pinning.lifecycle.challenge(), expiresAt: pinning.lifecycle.clock.unixSeconds() + 60
                ) {
                    $0.verifiedBootState = state
                    $0.verifiedBootKey = key
                })
        }
        let graphene = try enroll(state: 1, key: pinnedKey)
        #expect(graphene.status == 201, "\(graphene.bodyText)")
        let otherBuild = try enroll(state: 1, key: SHA256.hash(Array("another relocked build".utf8)))
        #expect(otherBuild.status == 401 && otherBuild.bodyText == #"{"error":"invalid_attestation"}"#)
        #expect(pinning.metrics.androidAttestations.count(.refused(.bootState)) == 1)
        let stock = try enroll(state: 0, key: SHA256.hash(Array("a stock OS key".utf8)))
        #expect(stock.status == 201, "\(stock.bodyText)")
        #expect(pinning.metrics.androidAttestations.count(.ok) == 2)
        #expect(try pinning.lifecycle.rowCounts()["installations"] == 2)
    }
}

import Foundation
import PushCrypto
import PushTestSupport
import Testing

@testable import PushGatewayClient

/// The known-answer transcripts of docs/protocol.md §3, built by the library.
@Suite("PushGatewayClient builds the transcripts and request bodies of docs/protocol.md §3–§4", .testBodyThreads)
struct TranscriptTests {
    struct Vectors: Decodable {
        struct Inputs: Decodable {
            let challengeID: String
            let installationHandle: String
            let challenge: String
            let keyID: String
            let appProfile: String
            let endpoint: String
            let relayPubkey: String
            let notBefore: Int64
            let expiresAt: Int64

            enum CodingKeys: String, CodingKey {
                case challengeID = "challenge_id"
                case installationHandle = "installation_handle"
                case challenge
                case keyID = "key_id"
                case appProfile = "app_profile"
                case endpoint
                case relayPubkey = "relay_pubkey"
                case notBefore = "not_before"
                case expiresAt = "expires_at"
            }
        }

        struct Vector: Decodable {
            let name: String
            let domain: String
            let transcript: String
            let sha256: String
        }

        let inputs: Inputs
        let vectors: [Vector]
    }

    static let origin = "https://push.buzz.xyz"

    static func vectors() throws -> Vectors {
        try JSONDecoder().decode(
            Vectors.self,
            from: Data(
                contentsOf: repository.appendingPathComponent(
                    "Tests/PushAttestTests/Fixtures/app-attest-transcripts.json")))
    }

    /// The request each vector describes, from the file's inputs (the generation and epochs the
    /// vectors use: delegation generation 1, revocation generation 2, epoch 1 → 2).
    static func request(named name: String, _ inputs: Vectors.Inputs) -> LifecycleRequest? {
        let challenge = Challenge(id: inputs.challengeID, value: inputs.challenge, expiresAt: 0)
        switch name {
        case "enroll", "enroll_custom":
            return .enroll(
                challenge: challenge, keyID: inputs.keyID,
                appProfile: name == "enroll" ? inputs.appProfile : "buzz-ios-custom", endpoint: inputs.endpoint,
                expiresAt: inputs.expiresAt)
        case "delegate":
            return .delegate(
                challenge: challenge, installationHandle: inputs.installationHandle, endpointEpoch: 1, generation: 1,
                relayPubkey: inputs.relayPubkey, notBefore: inputs.notBefore, expiresAt: inputs.expiresAt)
        case "rotate_endpoint":
            return .rotateEndpoint(
                challenge: challenge, installationHandle: inputs.installationHandle, endpointEpoch: 1,
                endpoint: inputs.endpoint)
        case "revoke_delegation":
            return .revokeDelegation(
                challenge: challenge, installationHandle: inputs.installationHandle,
                relayPubkey: inputs.relayPubkey, generation: 2)
        case "revoke_installation":
            return .revokeInstallation(
                challenge: challenge, installationHandle: inputs.installationHandle, endpointEpoch: 1)
        default: return nil
        }
    }

    @Test("every known-answer transcript is built byte for byte, and its clientDataHash is the vector's SHA-256")
    func knownAnswerTranscripts() throws {
        let file = try Self.vectors()
        #expect(file.vectors.count == 6)
        for vector in file.vectors {
            let request = try #require(Self.request(named: vector.name, file.inputs), "no request for \(vector.name)")
            let transcript = request.transcript(origin: Self.origin)
            #expect(transcript.domain == vector.domain)
            #expect(request.route.transcriptDomain == vector.domain)
            #expect(String(decoding: transcript.bytes, as: UTF8.self) == vector.transcript, "\(vector.name)")
            #expect(Hex.encode([UInt8](transcript.clientDataHash)) == vector.sha256, "\(vector.name)")
        }
    }

    @Test("a request body holds the transcript's members without audience, then the proof in standard base64")
    func requestBodies() throws {
        let inputs = try Self.vectors().inputs
        let proof = Data([0xfb, 0xff, 0x00])  // "+/8A": base64 with both non-alphanumerics
        let prefix =
            #"{"v":1,"challenge_id":"11111111-1111-4111-8111-111111111111","#
            + #""challenge":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8","#
        let handle = #""installation_handle":"22222222-2222-4222-8222-222222222222","#
        let expected: [String: String] = [
            "enroll": prefix
                + #""key_id":"qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqo=","app_profile":"buzz-ios-dogfood","#
                + #""endpoint":"0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20","#
                + #""endpoint_epoch":1,"expires_at":1752624000,"attestation":"+/8A"}"#,
            "delegate": prefix + handle + #""endpoint_epoch":1,"generation":1,"#
                + #""relay_pubkey":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","#
                + #""not_before":1752620000,"expires_at":1752624000,"assertion":"+/8A"}"#,
            "rotate_endpoint": prefix + handle + #""endpoint_epoch":1,"new_endpoint_epoch":2,"#
                + #""endpoint":"0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20","assertion":"+/8A"}"#,
            "revoke_delegation": prefix + handle
                + #""relay_pubkey":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","generation":2,"#
                + #""assertion":"+/8A"}"#,
            "revoke_installation": prefix + handle + #""endpoint_epoch":1,"new_endpoint_epoch":2,"assertion":"+/8A"}"#,
        ]
        for (name, body) in expected {
            let request = try #require(Self.request(named: name, inputs))
            #expect(String(decoding: request.body(proof: proof), as: UTF8.self) == body, "\(name)")
        }
        #expect(String(decoding: LifecycleRequest.challengeBody, as: UTF8.self) == #"{"v":1}"#)
        #expect(AppRoute.challenge.transcriptDomain == nil)
    }

    @Test("strings are escaped only for quote, backslash and U+0000…U+001F, with lowercase \\u00xx")
    func escaping() {
        let object = CompactJSONObject([("a", .string("q\"b\\c\u{1}\u{1f}/é")), ("n", .integer(-9))])
        #expect(object.text == #"{"a":"q\"b\\c\u0001\u001f/é","n":-9}"#)
    }

    @Test("the portable SHA-256 agrees with OpenSSL's for every length across the padding boundaries")
    func portableDigest() {
        #expect(
            Hex.encode([UInt8](TranscriptDigest.portableHash(Data("abc".utf8))))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        for length in 0...200 {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            #expect([UInt8](TranscriptDigest.portableHash(Data(message))) == SHA256.hash(message), "length \(length)")
        }
        let million = Data(repeating: 0x61, count: 1_000_000)
        #expect(
            Hex.encode([UInt8](TranscriptDigest.portableHash(million)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("a device token becomes lowercase hex, leading zeros kept")
    func endpointFromDeviceToken() {
        #expect(PushGatewayClient.endpoint(fromDeviceToken: Data([0x00, 0x0a, 0xff, 0x10])) == "000aff10")
    }
}

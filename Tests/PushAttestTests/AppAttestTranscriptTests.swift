import Foundation
import PushAttest
import PushCrypto
import PushTestSupport
import Testing

@Suite("App Attest transcripts (docs/protocol.md §3)", .testBodyThreads)
struct AppAttestTranscriptTests {
    struct VectorFile: Decodable {
        struct Inputs: Decodable {
            let challengeId: String
            let installationHandle: String
            let challenge: String
            let keyId: String
            let appProfile: String
            let endpoint: String
            let relayPubkey: String
            let notBefore: Int64
            let expiresAt: Int64
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

    /// The transcript for a vector, built from the file's inputs; epochs and generations are the
    /// request values each vector was made with.
    static func transcript(for name: String, inputs: VectorFile.Inputs) -> AppAttestTranscript? {
        switch name {
        case "enroll", "enroll_custom":
            return .enroll(
                origin: origin, challengeID: inputs.challengeId, challenge: inputs.challenge, keyID: inputs.keyId,
                appProfile: name == "enroll" ? inputs.appProfile : "buzz-ios-custom", endpoint: inputs.endpoint,
                endpointEpoch: 1, expiresAt: inputs.expiresAt)
        case "delegate":
            return .delegate(
                origin: origin, challengeID: inputs.challengeId, challenge: inputs.challenge,
                installationHandle: inputs.installationHandle, endpointEpoch: 1, generation: 1,
                relayPubkey: inputs.relayPubkey, notBefore: inputs.notBefore, expiresAt: inputs.expiresAt)
        case "rotate_endpoint":
            return .rotateEndpoint(
                origin: origin, challengeID: inputs.challengeId, challenge: inputs.challenge,
                installationHandle: inputs.installationHandle, endpointEpoch: 1, newEndpointEpoch: 2,
                endpoint: inputs.endpoint)
        case "revoke_delegation":
            return .revokeDelegation(
                origin: origin, challengeID: inputs.challengeId, challenge: inputs.challenge,
                installationHandle: inputs.installationHandle, relayPubkey: inputs.relayPubkey, generation: 2)
        case "revoke_installation":
            return .revokeInstallation(
                origin: origin, challengeID: inputs.challengeId, challenge: inputs.challenge,
                installationHandle: inputs.installationHandle, endpointEpoch: 1, newEndpointEpoch: 2)
        default:
            return nil
        }
    }

    @Test("every vector of app-attest-transcripts.json is reproduced byte for byte, with its SHA-256")
    func reproducesVectors() throws {
        let file = try Fixtures.decode(VectorFile.self, from: "app-attest-transcripts.json")
        #expect(file.vectors.count == 6)
        for vector in file.vectors {
            let transcript = try #require(Self.transcript(for: vector.name, inputs: file.inputs), "\(vector.name)")
            #expect(transcript.route.domain == vector.domain)
            #expect(transcript.bytes == Array(vector.transcript.utf8), "\(vector.name)")
            #expect(Hex.encode(transcript.clientDataHash) == vector.sha256, "\(vector.name)")
        }
    }

    @Test("audiences are the origin followed by each route's path")
    func audiences() {
        let expected: [AppAttestTranscript.Route: String] = [
            .enroll: "/v1/installations", .delegate: "/v1/delegations", .rotateEndpoint: "/v1/installations/endpoint",
            .revokeDelegation: "/v1/delegations/revoke", .revokeInstallation: "/v1/installations/revoke",
        ]
        for route in AppAttestTranscript.Route.allCases {
            #expect(route.path == expected[route])
        }
        let transcript = AppAttestTranscript.revokeInstallation(
            origin: "https://example.org:8443", challengeID: "c", challenge: "x", installationHandle: "h",
            endpointEpoch: 3, newEndpointEpoch: 4)
        #expect(transcript.members[1].value == .string("https://example.org:8443/v1/installations/revoke"))
    }

    @Test("strings escape only quote, backslash and U+0000..U+001F (lowercase hex); integers are shortest decimal")
    func escaping() {
        let transcript = AppAttestTranscript.revokeDelegation(
            origin: "o", challengeID: "a\"b\\c", challenge: "\u{0}\u{1f}\n\u{7f}é/", installationHandle: "\u{1b}",
            relayPubkey: "r", generation: -9_223_372_036_854_775_808)
        let expected =
            "buzz.push.revoke-delegation.v1\n{\"v\":1,\"audience\":\"o/v1/delegations/revoke\",\"challenge_id\":\"a\\\"b\\\\c\","
            + "\"challenge\":\"\\u0000\\u001f\\u000a\u{7f}é/\",\"installation_handle\":\"\\u001b\",\"relay_pubkey\":\"r\","
            + "\"generation\":-9223372036854775808}"
        #expect(transcript.bytes == Array(expected.utf8))
    }
}

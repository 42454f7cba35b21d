import Foundation
import Testing

@testable import GatewayAPI

@Suite("Strict request bodies and value formats (docs/protocol.md §1, §4)")
struct RouteRequestTests {
    static let uuid = "0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b"
    static let challenge = String(repeating: "A", count: 42) + "A"
    static let keyID = Data(repeating: 1, count: 32).base64EncodedString()
    // The secp256k1 generator's x coordinate: a valid x-only key.
    static let relay = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
    static let endpoint = "a1b2c3d4"
    static let assertion = Data([1, 2, 3]).base64EncodedString()

    /// A request body with `members` in order, values given as JSON text.
    static func body(_ members: [(String, String)]) -> [UInt8] {
        Array(("{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}").utf8)
    }

    static let delegate: [(String, String)] = [
        ("v", "1"), ("challenge_id", "\"\(uuid)\""), ("challenge", "\"\(challenge)\""),
        ("installation_handle", "\"\(uuid)\""), ("endpoint_epoch", "1"), ("generation", "1"),
        ("relay_pubkey", "\"\(relay)\""), ("not_before", "100"), ("expires_at", "200"),
        ("assertion", "\"\(assertion)\""),
    ]

    static func replacing(_ members: [(String, String)], _ name: String, with value: String) -> [(String, String)] {
        members.map { $0.0 == name ? ($0.0, value) : $0 }
    }

    @Test("a well-formed delegation body parses and keeps the values exactly as received")
    func delegateParses() throws {
        let request = try DelegateRequest(body: Self.body(Self.delegate))
        #expect(request.proof.challengeID.text == Self.uuid)
        #expect(request.proof.challenge.value == [UInt8](repeating: 0, count: 32))
        #expect(request.relayPublicKey.text == Self.relay)
        #expect(request.proof.assertion == [1, 2, 3])
        #expect((request.generation, request.notBefore, request.expiresAt) == (1, 100, 200))
    }

    @Test(
        "a delegation member in another format is invalid_request",
        arguments: [
            ("v", "2"), ("v", "1.0"), ("challenge_id", "\"0190A5B2-7C3D-7E4F-8A1B-2C3D4E5F6A7B\""),
            ("challenge", "\"" + String(repeating: "A", count: 42) + "\""),
            ("challenge", "\"" + String(repeating: "A", count: 42) + "=\""), ("installation_handle", "\"x\""),
            ("endpoint_epoch", "0"), ("generation", "0"), ("generation", "1e3"), ("generation", "9223372036854775808"),
            ("relay_pubkey", "\"" + relay.uppercased() + "\""),
            ("relay_pubkey", "\"" + String(repeating: "f", count: 64) + "\""),
            ("relay_pubkey", "\"" + relay.dropLast(2) + "\""), ("not_before", "200"), ("not_before", "\"100\""),
            ("assertion", "\"\""), ("assertion", "\"" + Data(repeating: 0, count: 1025).base64EncodedString() + "\""),
            ("assertion", "\"AQID!\""), ("expires_at", "null"),
        ])
    func delegateRejects(member: String, value: String) {
        #expect(throws: APIError(.invalidRequest)) {
            try DelegateRequest(body: Self.body(Self.replacing(Self.delegate, member, with: value)))
        }
    }

    @Test("missing, unknown and duplicate members and trailing data are invalid_request")
    func shapeRules() {
        let missing = Array(Self.delegate.dropLast())
        let unknown = Self.delegate + [("extra", "1")]
        let duplicate = Self.delegate + [("generation", "2")]
        for members in [missing, unknown, duplicate] {
            #expect(throws: APIError(.invalidRequest)) { try DelegateRequest(body: Self.body(members)) }
        }
        #expect(throws: APIError(.invalidRequest)) {
            try DelegateRequest(body: Self.body(Self.delegate) + Array(" {}".utf8))
        }
        #expect(throws: APIError(.invalidRequest)) { try ChallengeRequest(body: Array("[1]".utf8)) }
    }

    @Test(
        "enrollment needs epoch 1, a 32-byte key id, an attestation of at most 16384 bytes and a non-empty endpoint of at most 8 KiB"
    )
    func enrollRules() throws {
        let members: [(String, String)] = [
            ("v", "1"), ("challenge_id", "\"\(Self.uuid)\""), ("challenge", "\"\(Self.challenge)\""),
            ("key_id", "\"\(Self.keyID)\""), ("attestation", "\"\(Self.assertion)\""), ("app_profile", "\"p\""),
            ("endpoint", "\"\(Self.endpoint)\""), ("endpoint_epoch", "1"), ("expires_at", "5"),
        ]
        let request = try EnrollRequest(body: Self.body(members))
        #expect(request.keyID.value.count == 32 && request.head.endpoint == Self.endpoint)
        let unpadded = String(Self.keyID.dropLast())
        #expect(
            try EnrollRequest(body: Self.body(Self.replacing(members, "key_id", with: "\"\(unpadded)\""))).keyID.text
                == unpadded)
        let invalid: [(String, String)] = [
            ("endpoint_epoch", "2"), ("key_id", "\"" + Data(repeating: 1, count: 31).base64EncodedString() + "\""),
            ("attestation", "\"" + Data(repeating: 0, count: 16385).base64EncodedString() + "\""),
            ("endpoint", "\"\""), ("endpoint", "\"" + String(repeating: "ab", count: 4097) + "\""),
        ]
        for (member, value) in invalid {
            #expect(throws: APIError(.invalidRequest)) {
                try EnrollRequest(body: Self.body(Self.replacing(members, member, with: value)))
            }
        }
        // The profile's provider decides the format (docs/protocol.md §1): the body takes any text.
        let longest = String(repeating: "ab", count: 4096)
        #expect(
            try EnrollRequest(body: Self.body(Self.replacing(members, "endpoint", with: "\"\(longest)\""))).head
                .endpoint == longest)
    }

    @Test("android enrollment reads the same head as iOS enrollment but a certificate chain")
    func androidEnrollRules() throws {
        let certificate = "\"" + Data([0x30, 0x00]).base64EncodedString() + "\""
        let members: [(String, String)] = [
            ("v", "1"), ("challenge_id", "\"\(Self.uuid)\""), ("challenge", "\"\(Self.challenge)\""),
            ("attestation", "[\(certificate),\(certificate)]"), ("app_profile", "\"p\""),
            ("endpoint", "\"fcm:Token-1_a.b\""), ("endpoint_epoch", "1"), ("expires_at", "5"),
        ]
        let request = try AndroidEnrollRequest(body: Self.body(members))
        #expect(request.head.endpoint == "fcm:Token-1_a.b" && request.attestation.count == 2)
        #expect(request.head.challengeID.text == Self.uuid && request.head.appProfile == "p")
        #expect(request.head.endpointEpoch == 1 && request.head.expiresAt == 5)
        let invalid: [(String, String)] = [
            ("endpoint_epoch", "2"), ("endpoint", "\"\""), ("attestation", "[\(certificate)]"),
        ]
        for (member, value) in invalid {
            #expect(throws: APIError(.invalidRequest)) {
                try AndroidEnrollRequest(body: Self.body(Self.replacing(members, member, with: value)))
            }
        }
        #expect(throws: APIError(.invalidRequest)) {
            try AndroidEnrollRequest(body: Self.body(members + [("key_id", "\"\(Self.keyID)\"")]))
        }
    }

    @Test("rotation and installation revocation need new_endpoint_epoch = endpoint_epoch + 1 without overflow")
    func epochSuccessor() throws {
        let members: [(String, String)] = [
            ("v", "1"), ("challenge_id", "\"\(Self.uuid)\""), ("challenge", "\"\(Self.challenge)\""),
            ("installation_handle", "\"\(Self.uuid)\""), ("endpoint_epoch", "4"), ("new_endpoint_epoch", "5"),
            ("assertion", "\"\(Self.assertion)\""),
        ]
        #expect(try RevokeInstallationRequest(body: Self.body(members)).newEndpointEpoch == 5)
        let rotation = members + [("endpoint", "\"\(Self.endpoint)\"")]
        #expect(try RotateEndpointRequest(body: Self.body(rotation)).endpointEpoch == 4)
        for (epoch, next) in [("4", "6"), ("4", "4"), ("9223372036854775807", "-9223372036854775808"), ("0", "1")] {
            let changed = Self.replacing(
                Self.replacing(members, "endpoint_epoch", with: epoch), "new_endpoint_epoch", with: next)
            #expect(throws: APIError(.invalidRequest)) { try RevokeInstallationRequest(body: Self.body(changed)) }
            #expect(throws: APIError(.invalidRequest)) {
                try RotateEndpointRequest(body: Self.body(changed + [("endpoint", "\"\(Self.endpoint)\"")]))
            }
        }
    }

    @Test("delivery bodies: a canonical request id and a grant of at most 4096 bytes")
    func deliveryRules() throws {
        let members: [(String, String)] = [
            ("v", "1"), ("endpoint_grant", "\"k.abc\""), ("request_id", "\"\(Self.uuid)\""), ("expires_at", "9"),
        ]
        let request = try DeliveryRequest(body: Self.body(members))
        #expect(request.endpointGrant == "k.abc" && request.requestID.text == Self.uuid)
        let tooLong = "\"" + String(repeating: "a", count: 4097) + "\""
        for (member, value) in [
            ("endpoint_grant", tooLong), ("request_id", "\"\(Self.uuid.uppercased())\""), ("endpoint_grant", "7"),
        ] {
            #expect(throws: APIError(.invalidRequest)) {
                try DeliveryRequest(body: Self.body(Self.replacing(members, member, with: value)))
            }
        }
    }

    @Test(
        "every Unix time outside 0...253402300799 is invalid_request before any SQL",
        arguments: ["-9223372036854775808", "-1000000000000000", "-1", "253402300800", "9223372036854775807"])
    func unixTimesOutsideRangeAreRefused(value: String) {
        #expect(throws: APIError(.invalidRequest)) {
            try DelegateRequest(body: Self.body(Self.replacing(Self.delegate, "not_before", with: value)))
        }
        let notBeforeZero = Self.replacing(Self.delegate, "not_before", with: "0")
        #expect(throws: APIError(.invalidRequest)) {
            try DelegateRequest(body: Self.body(Self.replacing(notBeforeZero, "expires_at", with: value)))
        }
        let delivery: [(String, String)] = [
            ("v", "1"), ("endpoint_grant", "\"k.abc\""), ("request_id", "\"\(Self.uuid)\""), ("expires_at", value),
        ]
        #expect(throws: APIError(.invalidRequest)) { try DeliveryRequest(body: Self.body(delivery)) }
        let enroll: [(String, String)] = [
            ("v", "1"), ("challenge_id", "\"\(Self.uuid)\""), ("challenge", "\"\(Self.challenge)\""),
            ("key_id", "\"\(Self.keyID)\""), ("attestation", "\"\(Self.assertion)\""), ("app_profile", "\"p\""),
            ("endpoint", "\"\(Self.endpoint)\""), ("endpoint_epoch", "1"), ("expires_at", value),
        ]
        #expect(throws: APIError(.invalidRequest)) { try EnrollRequest(body: Self.body(enroll)) }
    }

    @Test("the ends of the Unix time range, 0 and 253402300799, are accepted")
    func unixTimeRangeEndsAreAccepted() throws {
        let ends = Self.replacing(
            Self.replacing(Self.delegate, "not_before", with: "0"), "expires_at", with: "253402300799")
        let request = try DelegateRequest(body: Self.body(ends))
        #expect((request.notBefore, request.expiresAt) == (0, 253_402_300_799))
    }

    @Test("revoking a delegation needs a generation of at least 1")
    func revokeDelegationRules() throws {
        let members: [(String, String)] = [
            ("v", "1"), ("challenge_id", "\"\(Self.uuid)\""), ("challenge", "\"\(Self.challenge)\""),
            ("installation_handle", "\"\(Self.uuid)\""), ("relay_pubkey", "\"\(Self.relay)\""), ("generation", "3"),
            ("assertion", "\"\(Self.assertion)\""),
        ]
        #expect(try RevokeDelegationRequest(body: Self.body(members)).generation == 3)
        #expect(throws: APIError(.invalidRequest)) {
            try RevokeDelegationRequest(body: Self.body(Self.replacing(members, "generation", with: "0")))
        }
    }
}

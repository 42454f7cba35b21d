import Foundation
import PushCrypto
import PushTestSupport
import Testing

/// docs/android-integration.md's worked transcripts are the bytes docs/protocol.md §3's rules make
/// of their stated values, with the stated length and SHA-256.
@Suite("docs/android-integration.md: the worked transcripts follow docs/protocol.md §3", .testBodyThreads)
struct AndroidIntegrationGuideTests {
    static let guide = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/android-integration.md")

    enum Value {
        case string(String)
        case integer(Int64)
    }

    /// §3: `<domain> "\n" <compact JSON>`, members in the given order; these values need no escaping.
    static func transcript(_ domain: String, _ members: [(String, Value)]) -> String {
        let json = members.map { name, value in
            switch value {
            case .string(let text): #""\#(name)":"\#(text)""#
            case .integer(let number): #""\#(name)":\#(number)"#
            }
        }
        return domain + "\n{" + json.joined(separator: ",") + "}"
    }

    struct Example: Sendable, CustomTestStringConvertible {
        let name: String
        let transcript: String
        let sha256: String
        var testDescription: String { name }
    }

    static let origin = "https://push.buzz.xyz"
    static let examples = [
        Example(
            name: "enrollment",
            transcript: transcript(
                "push-gateway.enroll-android.v1",
                [
                    ("v", .integer(1)), ("audience", .string(origin + "/v1/installations/android")),
                    ("challenge_id", .string("0193a7c2-5e10-7b3a-9c4d-2f6e8a1b3c5d")),
                    ("challenge", .string("q7bJx0Rk3mWcT9uYfA2LsV8nE4pZ1oHgD6iKjN5MtQw")),
                    ("app_profile", .string("buzz-android")),
                    ("endpoint", .string("dP3xK9vRQ0e:APA91bF2mZq7Lr8sT1uV4wX6yA0bC3dE5fG7hI9jK")),
                    ("endpoint_epoch", .integer(1)), ("expires_at", .integer(1_767_225_600)),
                ]),
            sha256: "983fbadd7d9777e769e0e76bacd3a67824f60e3932e0eb025719ea8b8a1b8e0c"),
        Example(
            name: "delegation",
            transcript: transcript(
                "buzz.push.delegate.v1",
                [
                    ("v", .integer(1)), ("audience", .string(origin + "/v1/delegations")),
                    ("challenge_id", .string("0193a7c4-0a21-7e5f-8b6c-4d3e2f1a0b9c")),
                    ("challenge", .string("Zr4nW1qT8yVb2xKc6mJd0hLs5pGf9aEu3oNi7tYk4Rw")),
                    ("installation_handle", .string("5b0f3c1e-8d2a-4f6b-9e7c-1a2b3c4d5e6f")),
                    ("endpoint_epoch", .integer(1)), ("generation", .integer(1)),
                    ("relay_pubkey", .string("79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")),
                    ("not_before", .integer(1_767_139_200)), ("expires_at", .integer(1_767_744_000)),
                ]),
            sha256: "dcb73cc010dc9b842c7b25df67ae5658237e303c7b4fd473b8bcfe8092bb6091"),
    ]

    @Test("the guide shows the transcript's exact bytes, their length and their SHA-256", arguments: examples)
    func workedExample(example: Example) throws {
        let text = try String(contentsOf: Self.guide, encoding: .utf8)
        let bytes = Array(example.transcript.utf8)
        #expect(text.contains("```text\n" + example.transcript + "\n```"))
        #expect(text.contains("these \(bytes.count) bytes"))
        let digest = SHA256.hash(bytes).map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }
        #expect(digest.joined() == example.sha256)
        #expect(text.contains("    " + example.sha256 + "\n"))
    }
}

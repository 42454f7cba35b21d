import Foundation
import PushAPNs
import PushCrypto
import PushTestSupport
import Testing

/// docs/ios-integration.md quotes the transcript vectors byte for byte, the push the device receives
/// and the profile settings of each build; this keeps it from drifting. (Its Swift is checked against
/// the library by PushGatewayClientTests' GuideSnippetTests.)
@Suite("The iOS integration guide quotes the transcript vectors exactly", .testBodyThreads)
struct IOSIntegrationGuideTests {
    struct Vector: Decodable {
        let name: String
        let domain: String
        let transcript: String
        let sha256: String
    }

    struct Vectors: Decodable {
        let inputs: [String: InputValue]
        let vectors: [Vector]
    }

    /// An input of the vector file: text or an integer.
    struct InputValue: Decodable {
        let text: String

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int64.self) {
                text = String(number)
            } else {
                text = try container.decode(String.self)
            }
        }
    }

    /// The five routes the guide walks through (the file's `enroll_custom` only varies the profile).
    static let routes = ["enroll", "delegate", "rotate_endpoint", "revoke_delegation", "revoke_installation"]

    static func vectors() throws -> Vectors {
        let data = try Data(
            contentsOf: DocsTests.repository.appendingPathComponent(
                "Tests/PushAttestTests/Fixtures/app-attest-transcripts.json"))
        return try JSONDecoder().decode(Vectors.self, from: data)
    }

    static func guide() throws -> String { try DocsTests.read("docs/ios-integration.md") }

    /// The contents of every ```text block of the guide.
    static func transcriptBlocks(_ guide: String) -> [String] {
        guide.matches(of: /```text\n((?:.|\n)*?)\n```/).map { String($0.output.1) }
    }

    @Test("each of the five transcripts appears byte for byte, followed by its SHA-256, and the hash is right")
    func everyTranscriptQuotedWithItsHash() throws {
        let guide = try Self.guide()
        let vectors = try Self.vectors().vectors
        for route in Self.routes {
            let vector = try #require(vectors.first { $0.name == route }, "no vector \(route) in the fixture")
            #expect(vector.transcript.hasPrefix(vector.domain + "\n"))
            #expect(Hex.encode(SHA256.hash(Array(vector.transcript.utf8))) == vector.sha256)
            let quoted = "```text\n\(vector.transcript)\n```\n\nSHA-256 `\(vector.sha256)`"
            #expect(guide.contains(quoted), "docs/ios-integration.md lacks the \(route) transcript or its SHA-256")
            #expect(guide.contains("| `\(vector.domain)` |"), "the domain table lacks \(vector.domain)")
        }
    }

    @Test("every transcript block and every SHA-256 in the guide is one of the vectors")
    func nothingStaleInTheGuide() throws {
        let guide = try Self.guide()
        let vectors = try Self.vectors().vectors
        let blocks = Self.transcriptBlocks(guide)
        #expect(blocks.count == Self.routes.count)
        for block in blocks {
            #expect(vectors.contains { $0.transcript == block }, "a transcript block matches no vector: \(block)")
        }
        for match in guide.matches(of: /SHA-256 `([0-9a-f]+)`/) {
            #expect(
                vectors.contains { $0.sha256 == match.output.1 },
                "the guide quotes an unknown SHA-256 \(match.output.1)")
        }
    }

    @Test("the member-order table lists each transcript's members in the order of the vectors")
    func memberOrderTableMatchesTheVectors() throws {
        let guide = try Self.guide()
        for vector in try Self.vectors().vectors where Self.routes.contains(vector.name) {
            let json = vector.transcript.dropFirst(vector.domain.count + 1)
            let members = json.matches(of: /"([a-z_]+)":/).map { String($0.output.1) }
            let row = "| `\(vector.domain)` | \(members.joined(separator: ", ")) |"
            #expect(guide.contains(row), "docs/ios-integration.md's member order for \(vector.domain) is not \(row)")
        }
    }

    @Test("the worked examples' inputs table holds every input of the vectors")
    func inputsTableMatchesTheVectors() throws {
        let guide = try Self.guide()
        for (name, value) in try Self.vectors().inputs where !name.hasSuffix("_note") {
            #expect(guide.contains("`\(value.text)`"), "the inputs table lacks \(name) = \(value.text)")
        }
    }

    @Test("the guide quotes the push a device receives exactly as the gateway sends it (docs/protocol.md §8)")
    func pushPayloadQuoted() throws {
        let guide = try Self.guide()
        let payload = String(decoding: APNsClient.body, as: UTF8.self)
        #expect(guide.contains("\n    \(payload)\n"), "docs/ios-integration.md does not quote \(payload)")
        let protocolText = try DocsTests.read("docs/protocol.md")
        for header in ["`apns-push-type: alert`", "`apns-priority: 10`"] {
            #expect(guide.contains(header) && protocolText.contains(header), "\(header)")
        }
    }

    @Test("every APNs / App Attest environment pair of the guide's build table is a profile the gateway accepts")
    func buildTableProfilesParse() throws {
        let guide = try Self.guide()
        let pairs = guide.matches(of: /\| `(\w+)` \/ `(\w+)` \|/).map { (String($0.output.1), String($0.output.2)) }
        #expect(pairs.count == 4)
        #expect(Set(pairs.map(\.0)) == ["sandbox", "production"])
        #expect(Set(pairs.map(\.1)) == ["development", "production"])
        for (apns, appAttest) in pairs {
            let errors = try ConfigurationTestEnvironment()
                .with("PUSH_GATEWAY_PROFILE_BUZZ_IOS_PRODUCTION_APNS_ENVIRONMENT", apns)
                .with("PUSH_GATEWAY_PROFILE_BUZZ_IOS_PRODUCTION_APP_ATTEST_ENVIRONMENT", appAttest).errors()
            #expect(errors.isEmpty, "\(apns) / \(appAttest): \(errors)")
        }
    }
}

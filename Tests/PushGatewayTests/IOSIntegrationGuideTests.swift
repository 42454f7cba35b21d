import Foundation
import PushCrypto
import Testing

/// docs/ios-integration.md quotes the transcript vectors byte for byte; this keeps it from drifting.
@Suite("The iOS integration guide quotes the transcript vectors exactly")
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
}

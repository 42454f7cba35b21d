import Foundation
import PushCrypto
import PushNostr
import PushTestSupport
import Testing

/// docs/relay-integration.md's worked NIP-98 example, recomputed line by line.
@Suite("The NIP-98 known-answer vector of docs/relay-integration.md", .testBodyThreads)
struct NIP98VectorTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `label  value` lines of the worked example, by label.
    static func vector() throws -> [String: String] {
        let text = try String(
            contentsOf: repository.appendingPathComponent("docs/relay-integration.md"), encoding: .utf8)
        let start = try #require(text.firstRange(of: "## A worked example to check your signer against"))
        let section = text[start.upperBound...]
        let end = section.firstRange(of: "\n## ")?.lowerBound ?? section.endIndex
        var values: [String: String] = [:]
        for line in section[..<end].split(separator: "\n") where line.hasPrefix("    ") {
            guard let match = line.firstMatch(of: /^    (?<label>[A-Za-z_ ]+?)\s{2,}(?<value>\S.*)$/) else { continue }
            values[String(match.label)] = String(match.value)
        }
        return values
    }

    @Test("payload hash, id preimage, event id, signature with the fixed aux and header all recompute")
    func vectorRecomputes() throws {
        let vector = try Self.vector()
        func value(_ label: String) throws -> String { try #require(vector[label], "no \(label) line") }
        let secret = try #require(Hex.decode(try value("secret key"), byteCount: 32))
        let key = try #require(SchnorrSigningKey(secretKey: secret))
        #expect(key.publicKey.hex == vector["public key"])
        let body = Array(try value("body").utf8)
        #expect(Hex.encode(SHA256.hash(body)) == vector["payload"])
        let url = try value("url")
        let createdAt = try #require(Int64(try value("created_at")))
        let aux = try #require(Hex.decode(try value("aux"), byteCount: 32))

        let event = NIP98Signer.event(
            url: url, method: "POST", body: body, createdAt: createdAt, key: key, auxiliaryRandomness: aux)
        let preimage = NostrEventSerialization.idPreimage(
            publicKey: key.publicKey, createdAt: createdAt, kind: event.kind, tags: event.tags, content: event.content)
        #expect(String(decoding: preimage, as: UTF8.self) == vector["id preimage"])
        #expect(Hex.encode(event.id) == vector["event id"])
        #expect(Hex.encode(event.signature) == vector["sig"])
        let header = NIP98Signer.authorizationHeader(for: event)
        #expect(header == vector["Authorization"])

        // The gateway's verifier accepts it for that URL and body at that second.
        let received = try #require(
            ReceivedRequestURL(host: "push.example.com", forwardedProto: "https", requestTarget: "/v1/deliveries/apns"))
        let verdict = NIP98Verifier().verify(
            authorization: header, requestURL: received, method: "POST", body: body, now: createdAt)
        guard case .success(let authorization) = verdict else {
            Issue.record("the verifier refused the vector: \(verdict)")
            return
        }
        #expect(authorization.relayPublicKey == key.publicKey)
    }
}

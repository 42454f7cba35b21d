import Foundation
import Testing

@testable import PushJSON

@Suite("canonical JSON writer")
struct JSONWriterTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test("escapes only quote, backslash and U+0000..U+001F, in lowercase hex")
    func escaping() {
        var writer = JSONWriter()
        writer.string("a\"b\\c/d\u{0}\u{1F}\n\t\u{7F}é😀</")
        #expect(text(writer.bytes) == #""a\"b\\c/d\u0000\u001f\u000a\u0009"# + "\u{7F}é😀</\"")
    }

    @Test("every control character uses the six-byte form")
    func controlCharacters() {
        for value in 0..<0x20 {
            var writer = JSONWriter()
            writer.string(String(UnicodeScalar(UInt8(value))))
            let hex = String(value, radix: 16)
            #expect(text(writer.bytes) == "\"\\u00" + String(repeating: "0", count: 2 - hex.count) + hex + "\"")
        }
    }

    @Test("integers are written in shortest decimal")
    func integers() {
        let cases: [(Int64, String)] = [
            (0, "0"), (1, "1"), (-1, "-1"), (10, "10"), (9_007_199_254_740_992, "9007199254740992"),
            (Int64.max, "9223372036854775807"), (Int64.min, "-9223372036854775808"),
        ]
        for (number, expected) in cases {
            var writer = JSONWriter()
            writer.integer(number)
            #expect(text(writer.bytes) == expected)
        }
    }

    @Test("members keep the caller's order with no whitespace")
    func memberOrder() {
        var writer = JSONWriter(prefix: Array("domain\n".utf8))
        writer.beginObject()
        writer.member("z", 1)
        writer.member("a", "x")
        writer.name("n")
        writer.beginArray()
        writer.bool(true)
        writer.null()
        writer.beginObject()
        writer.endObject()
        writer.beginArray()
        writer.endArray()
        writer.endArray()
        writer.member("f", false)
        writer.member("o", nil as Int64?)
        writer.member("p", 5 as Int64?)
        writer.endObject()
        #expect(
            text(writer.bytes) == #"domain"# + "\n" + #"{"z":1,"a":"x","n":[true,null,{},[]],"f":false,"o":null,"p":5}"#
        )
    }

    @Test("serializing what the reader read gives the canonical form")
    func roundTrip() throws {
        let value = try JSONReader.parse(#" { "b" : [ 1 , 2.50 , "\u00e9\/" ] , "a" : { } , "c" : -0 } "#)
        #expect(text(JSONWriter.serialize(value)) == #"{"b":[1,2.50,"é/"],"a":{},"c":-0}"#)
        #expect(try JSONReader.parse(JSONWriter.serialize(value)) == value)
    }

    /// One vector of the fixture: `domain`, the expected `transcript` bytes and its `name`.
    private struct TranscriptVector {
        let name: String
        let domain: String
        let transcript: String
    }

    /// Reads the fixture with the strict reader itself (its shape: `inputs` and `vectors`).
    private func loadVectors() throws -> (inputs: JSONObject, vectors: [TranscriptVector]) {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/app-attest-transcripts", withExtension: "json"))
        let file = try JSONObject(try JSONReader.parse(Array(try Data(contentsOf: url))))
        let vectors = try file.array("vectors").map { element in
            let vector = try JSONObject.closed(element, keys: ["name", "domain", "transcript", "sha256"])
            return TranscriptVector(
                name: try vector.string("name"), domain: try vector.string("domain"),
                transcript: try vector.string("transcript"))
        }
        return (try file.object("inputs"), vectors)
    }

    private func transcript(for vector: TranscriptVector, inputs: JSONObject) throws -> [UInt8] {
        let origin = "https://push.buzz.xyz"
        var writer = JSONWriter(prefix: Array((vector.domain + "\n").utf8))
        writer.beginObject()
        writer.member("v", 1)
        switch vector.name {
        case "enroll", "enroll_custom":
            writer.member("audience", origin + "/v1/installations")
            writer.member("challenge_id", try inputs.string("challenge_id"))
            writer.member("challenge", try inputs.string("challenge"))
            writer.member("key_id", try inputs.string("key_id"))
            // The custom vector only differs in its profile, which the inputs block does not list.
            writer.member("app_profile", vector.name == "enroll" ? try inputs.string("app_profile") : "buzz-ios-custom")
            writer.member("endpoint", try inputs.string("endpoint"))
            writer.member("endpoint_epoch", 1)
            writer.member("expires_at", try inputs.int64("expires_at"))
        case "delegate":
            writer.member("audience", origin + "/v1/delegations")
            writer.member("challenge_id", try inputs.string("challenge_id"))
            writer.member("challenge", try inputs.string("challenge"))
            writer.member("installation_handle", try inputs.string("installation_handle"))
            writer.member("endpoint_epoch", 1)
            writer.member("generation", 1)
            writer.member("relay_pubkey", try inputs.string("relay_pubkey"))
            writer.member("not_before", try inputs.int64("not_before"))
            writer.member("expires_at", try inputs.int64("expires_at"))
        case "rotate_endpoint":
            writer.member("audience", origin + "/v1/installations/endpoint")
            writer.member("challenge_id", try inputs.string("challenge_id"))
            writer.member("challenge", try inputs.string("challenge"))
            writer.member("installation_handle", try inputs.string("installation_handle"))
            writer.member("endpoint_epoch", 1)
            writer.member("new_endpoint_epoch", 2)
            writer.member("endpoint", try inputs.string("endpoint"))
        case "revoke_delegation":
            writer.member("audience", origin + "/v1/delegations/revoke")
            writer.member("challenge_id", try inputs.string("challenge_id"))
            writer.member("challenge", try inputs.string("challenge"))
            writer.member("installation_handle", try inputs.string("installation_handle"))
            writer.member("relay_pubkey", try inputs.string("relay_pubkey"))
            writer.member("generation", 2)
        case "revoke_installation":
            writer.member("audience", origin + "/v1/installations/revoke")
            writer.member("challenge_id", try inputs.string("challenge_id"))
            writer.member("challenge", try inputs.string("challenge"))
            writer.member("installation_handle", try inputs.string("installation_handle"))
            writer.member("endpoint_epoch", 1)
            writer.member("new_endpoint_epoch", 2)
        default:
            throw TranscriptVectorError(name: vector.name)
        }
        writer.endObject()
        return writer.bytes
    }

    private struct TranscriptVectorError: Error {
        let name: String
    }

    @Test("the writer reproduces every App Attest transcript vector byte for byte")
    func transcriptVectors() throws {
        let (inputs, vectors) = try loadVectors()
        #expect(vectors.count == 6)
        for vector in vectors {
            #expect(try transcript(for: vector, inputs: inputs) == Array(vector.transcript.utf8), "\(vector.name)")
        }
    }

    @Test("the strict reader reads every transcript's JSON part back to the same bytes")
    func transcriptVectorsRoundTrip() throws {
        for vector in try loadVectors().vectors {
            let bytes = Array(vector.transcript.utf8)
            let newline = try #require(bytes.firstIndex(of: 0x0A))
            let json = Array(bytes[(newline + 1)...])
            #expect(JSONWriter.serialize(try JSONReader.parse(json)) == json, "\(vector.name)")
        }
    }
}

import Foundation
import PushCrypto
import PushNostr
import PushTestSupport
import Testing

@testable import PushMarmot

/// The worked example of docs/marmot.md, recomputed from its fixed inputs with the test encoder and
/// checked against the document's bytes, then opened by the server side.
enum MarmotWorkedExample {
    static let serverSecret = [UInt8](repeating: 0x11, count: 32)
    static let ephemeralSecret = [UInt8](repeating: 0x22, count: 32)
    static let authorSecret = [UInt8](repeating: 0x33, count: 32)
    static let wrapSecret = [UInt8](repeating: 0x44, count: 32)
    static let nonce: [UInt8] = Array(0...11)
    static let apnsToken: [UInt8] = Array(0xa0...0xbf)
    static let padding: [UInt8] = [0xee]
    static let createdAt: Int64 = 1_800_000_000

    static var server: SchnorrSigningKey { SchnorrSigningKey(secretKey: serverSecret)! }
    static var ephemeral: SchnorrSigningKey { SchnorrSigningKey(secretKey: ephemeralSecret)! }
    static var author: SchnorrSigningKey { SchnorrSigningKey(secretKey: authorSecret)! }

    static var sharedX: [UInt8] { ephemeral.sharedSecretX(with: server.publicKey)! }
    static var tokenKey: [UInt8] { MarmotPushToken.key(sharedX: sharedX) }
    static var chunk: [UInt8] {
        MarmotTestEncoder.chunk(
            platform: 0x01, token: apnsToken, server: server.publicKey, ephemeralSecret: ephemeralSecret, nonce: nonce,
            padding: padding)
    }
    static var rumor: NostrRumor {
        MarmotTestEncoder.rumor(content: Base64.encode(chunk), author: author, createdAt: createdAt)
    }
    static var wrap: NostrEvent {
        try! NIP59.wrap(
            rumor, author: author, recipient: server.publicKey,
            wrapKey: SchnorrSigningKey(secretKey: wrapSecret)!, sealCreatedAt: createdAt - 3_600,
            wrapCreatedAt: createdAt - 7_200,
            randomness: NIP59.WrapRandomness(
                sealNonce: [UInt8](repeating: 0x55, count: 32), wrapNonce: [UInt8](repeating: 0x66, count: 32),
                sealSignature: [UInt8](repeating: 0x77, count: 32), wrapSignature: [UInt8](repeating: 0x88, count: 32)))
    }

    /// The section of docs/marmot.md that shows the example.
    static func documentSection() throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/marmot.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let start = try #require(text.range(of: "## How a client encrypts a token and builds a trigger"))
        let rest = text[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)])
    }

    /// The lines of the fenced block that follows `label` in `section`, joined without newlines.
    static func block(after label: String, in section: String) throws -> String {
        let labelRange = try #require(section.range(of: label))
        let afterLabel = section[labelRange.upperBound...]
        let open = try #require(afterLabel.range(of: "```\n"))
        let body = afterLabel[open.upperBound...]
        let close = try #require(body.range(of: "```"))
        return body[..<close.lowerBound].split(separator: "\n").joined()
    }
}

@Suite("docs/marmot.md's worked example", .testBodyThreads)
struct MarmotWorkedExampleTests {
    @Test("every value the document prints is what the encoder computes from the fixed inputs")
    func documentMatches() throws {
        typealias E = MarmotWorkedExample
        let section = try E.documentSection()
        for value in [
            E.server.publicKey.hex, E.ephemeral.publicKey.hex, Hex.encode(E.sharedX), Hex.encode(E.tokenKey),
            Hex.encode(E.rumor.id), Hex.encode(E.wrap.id), E.author.publicKey.hex,
            Hex.encode(SHA256.hash(E.chunk)), E.wrap.publicKey.hex,
        ] {
            #expect(section.contains(value), "docs/marmot.md lacks \(value)")
        }
        #expect(try E.block(after: "The chunk (base64", in: section) == Base64.encode(E.chunk))
        #expect(try E.block(after: "The rumor", in: section) == String(decoding: E.rumor.json, as: UTF8.self))
    }

    @Test("the example's gift wrap decodes to one APNs token, the example's")
    func exampleDecodes() throws {
        typealias E = MarmotWorkedExample
        let trigger = try MarmotTriggerDecoder.decode(E.wrap, serverKey: E.server, now: E.createdAt).get()
        #expect(
            trigger.openChunks(serverKey: E.server) == [
                .success(MarmotDeviceToken(platform: .apns, bytes: E.apnsToken))
            ])
    }
}

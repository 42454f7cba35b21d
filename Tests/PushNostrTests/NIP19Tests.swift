import Foundation
import PushCrypto
import PushTestSupport
import Testing

@testable import PushNostr

@Suite("NIP-19 npub: bech32 of a public key", .testBodyThreads)
struct NIP19Tests {
    static let vectorHex = "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e"
    static let vectorNpub = "npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg"

    @Test("NIP-19's example key encodes to its npub and the npub decodes back to the key")
    func vector() throws {
        let key = try #require(XOnlyPublicKey(hex: Self.vectorHex))
        #expect(NIP19.npub(key) == Self.vectorNpub)
        #expect(NIP19.publicKey(npub: Self.vectorNpub) == key)
        #expect(NIP19.publicKey(npub: Self.vectorNpub.uppercased()) == key)
    }

    @Test("a changed character, mixed case, another prefix, a wrong length or padding, or no curve point is refused")
    func refusals() throws {
        var flipped = Array(Self.vectorNpub)
        flipped[20] = flipped[20] == "q" ? "p" : "q"
        let key = try #require(XOnlyPublicKey(hex: Self.vectorHex))
        let notAPoint = [UInt8](repeating: 0xff, count: 32)
        let cases = [
            String(flipped),
            "N" + Self.vectorNpub.dropFirst(),
            Bech32.encode(humanReadablePart: "nsec", data: key.bytes),
            Bech32.encode(humanReadablePart: "npub", data: Array(key.bytes.prefix(31))),
            Bech32.encode(humanReadablePart: "npub", data: key.bytes + [0]),
            Bech32.encode(humanReadablePart: "npub", data: notAPoint),
            Self.vectorNpub.replacingOccurrences(of: "1", with: "b"),
            "npub1", "", "npub1" + String(repeating: "q", count: 90),
        ]
        for text in cases { #expect(NIP19.publicKey(npub: text) == nil, "\(text)") }
    }

    @Test("BIP-173's valid test strings decode and re-encode; its invalid ones are refused")
    func bip173Vectors() throws {
        let valid = [
            "A12UEL5L", "a12uel5l",
            "an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
            "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
            "11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqc8247j",
            "split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w",
        ]
        for text in valid {
            let (prefix, _) = try #require(Bech32.decode(text), "\(text)")
            #expect(!prefix.isEmpty)
        }
        // Whole-byte payloads re-encode to the same string.
        let (prefix, data) = try #require(Bech32.decode("abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw"))
        #expect(Bech32.encode(humanReadablePart: prefix, data: data) == "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw")
        let invalid = [
            "\u{20}1nwldj5", "\u{7f}1axkwrx",
            "an84characterslonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1569pvx",
            "pzry9x0s0muk", "1pzry9x0s0muk", "x1b4n0q5v", "li1dgmt3", "A1G7SGD8", "10a06t8", "1qzzfhee",
        ]
        for text in invalid { #expect(Bech32.decode(text) == nil, "\(text)") }
    }

    @Test("npubs of random keys are those rust-nostr's bindings (nostr-sdk) make, and decode back")
    func independentImplementation() throws {
        let keys = (0..<20).map { _ in SchnorrSigningKey(secretKey: try! SecureRandom.bytes(32))!.publicKey }
        let script = """
            import sys
            from nostr_sdk import PublicKey
            for hex in sys.argv[1:]:
                print(PublicKey.parse(hex).to_bech32())
            """
        let result = try PythonProcess.run(["-c", script] + keys.map(\.hex), standardError: .inherited)
        try #require(result.status == 0)
        let theirs = String(decoding: result.output, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(theirs == keys.map(NIP19.npub))
        #expect(theirs.compactMap(NIP19.publicKey(npub:)) == keys)
    }
}

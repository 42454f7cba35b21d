import PushCrypto
import Testing

@Suite("Base64 and base64url")
struct Base64Tests {
    // RFC 4648 §10 test vectors.
    static let rfc4648: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test("standard encoding matches RFC 4648 §10", arguments: rfc4648)
    func encodesRFCVectors(plain: String, encoded: String) {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
    }

    @Test("standard decoding accepts the padded and the unpadded form", arguments: rfc4648)
    func decodesPaddedAndUnpadded(plain: String, encoded: String) {
        #expect(Base64.decode(encoded) == Array(plain.utf8))
        let unpadded = String(encoded.filter { $0 != "=" })
        #expect(Base64.decode(unpadded) == Array(plain.utf8))
    }

    @Test(
        "standard decoding refuses malformed text",
        arguments: [
            "Zg=", "Zh==", "Zm9=", "Z", "Zm9v\n", " Zm9v", "Zm 9v", "Zm9v====", "Zg==Zg==", "Zm-v", "Zm_v", "====",
        ])
    func refusesMalformed(text: String) {
        #expect(Base64.decode(text) == nil)
    }

    @Test("base64url without padding round-trips every byte value and uses - and _")
    func urlRoundTrip() {
        let bytes = (0...255).map { UInt8($0) }
        let encoded = Base64.encodeURLNoPadding(bytes)
        #expect(!encoded.contains("=") && !encoded.contains("+") && !encoded.contains("/"))
        #expect(encoded.contains("-") && encoded.contains("_"))
        #expect(Base64.decodeURLNoPadding(encoded) == bytes)
    }

    @Test("base64url decoding refuses padding and the standard alphabet's symbols", arguments: ["Zg==", "+/8", "a/8"])
    func urlRefusesStandardForms(text: String) {
        #expect(Base64.decodeURLNoPadding(text) == nil)
    }

    @Test("the 32-byte challenge of the transcript vectors is 43 base64url characters")
    func challengeLength() {
        let challenge = (0..<32).map { UInt8($0) }
        #expect(Base64.encodeURLNoPadding(challenge) == "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
    }
}

@Suite("Hex")
struct HexTests {
    @Test("encodes lowercase and decodes either case")
    func roundTrip() {
        #expect(Hex.encode([0x00, 0xab, 0xff, 0x10]) == "00abff10")
        #expect(Hex.decode("00ABff10") == [0x00, 0xab, 0xff, 0x10])
        #expect(Hex.decode("") == [])
    }

    @Test("refuses odd lengths, non-hex characters and, when asked, upper case", arguments: ["0", "0g", "+1", " 01"])
    func refusesMalformed(text: String) {
        #expect(Hex.decode(text) == nil)
    }

    @Test("lowercaseOnly refuses upper-case digits")
    func lowercaseOnly() {
        #expect(Hex.decode("AB", lowercaseOnly: true) == nil)
        #expect(Hex.decode("ab", lowercaseOnly: true) == [0xab])
    }
}

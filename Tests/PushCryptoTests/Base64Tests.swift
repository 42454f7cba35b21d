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

    @Test("standard decoding accepts the padded and the unpadded form, as text and as bytes", arguments: rfc4648)
    func decodesPaddedAndUnpadded(plain: String, encoded: String) {
        let unpadded = String(encoded.filter { $0 != "=" })
        for text in [encoded, unpadded] {
            #expect(Base64.decode(text) == Array(plain.utf8))
            #expect(Base64.decode(Array(text.utf8)) == Array(plain.utf8))
            // A slice that does not start at index 0, as a credential cut out of a header is.
            #expect(Base64.decode(Array(("Nostr " + text).utf8).dropFirst(6)) == Array(plain.utf8))
        }
    }

    @Test("standard encoding round-trips every byte value and every length, padded and unpadded")
    func standardRoundTrip() {
        let allBytes = (0...255).map { UInt8($0) }
        #expect(Base64.decode(Base64.encode(allBytes)) == allBytes)
        #expect(Base64.encode([0xfb, 0xff]) == "+/8=")
        for length in 0...40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 5) }
            let text = Base64.encode(bytes)
            #expect(Base64.decode(text) == bytes)
            #expect(Base64.decode(String(text.filter { $0 != "=" })) == bytes)
        }
    }

    @Test(
        "standard decoding refuses malformed text, as text and as bytes",
        arguments: [
            "Zg=", "Zg===", "Z===", "Zh==", "Zm9=", "Z", "Zm9vY", "Zm9v=", "Zm9vYh", "Zm8==", "Zm9v\n", " Zm9v",
            "Zm 9v", "Zm 8=", "Zm9v Yg==", "Zm9v\nYg==", "Zm9v====", "Zg==Zg==", "Zm8=Zm8=", "Zm-v", "Zm_v", "Zm-_",
            "-_8=", "====", "Zm8=\0", "Zm8é",
        ])
    func refusesMalformed(text: String) {
        #expect(Base64.decode(text) == nil)
        #expect(Base64.decode(Array(text.utf8)) == nil)
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

    @Test("every byte outside the alphabet is refused at the first and the last position, in both alphabets")
    func everyForeignByteIsRefused() {
        let standard = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let url = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var wronglyAccepted: [UInt8] = []
        for byte in (0...255).map({ UInt8($0) }) {
            // "AAAA" decodes to three zero bytes; a foreign byte must spoil it wherever it sits.
            let first = [byte] + Array("AAA".utf8)
            let last = Array("AAA".utf8) + [byte]
            let standardAccepts = Base64.decode(first) != nil || Base64.decode(last) != nil
            let urlAccepts =
                Base64.decodeURLNoPadding(String(decoding: first, as: UTF8.self)) != nil
                || Base64.decodeURLNoPadding(String(decoding: last, as: UTF8.self)) != nil
            if standardAccepts != standard.contains(byte) && byte != UInt8(ascii: "=")
                || urlAccepts != url.contains(byte)
            {
                wronglyAccepted.append(byte)
            }
        }
        #expect(wronglyAccepted.isEmpty)
    }

    @Test(
        "a 2- or 3-symbol tail is accepted exactly when its unused bits are zero, in both alphabets and from substrings"
    )
    func tailBits() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var wrong: [String] = []
        for (value, symbol) in alphabet.enumerated() {
            // After a whole group, so the four-at-a-time loop runs before the tail.
            let twoSymbols = "AAAAQ" + String(UnicodeScalar(symbol))
            let threeSymbols = "AAAAQQ" + String(UnicodeScalar(symbol))
            let expectedTwo: [UInt8]? = value & 0x0F == 0 ? [0, 0, 0, 0x40 | UInt8(value >> 4)] : nil
            let expectedThree: [UInt8]? = value & 0x03 == 0 ? [0, 0, 0, 0x41, UInt8(value >> 2)] : nil
            let padded = "AAAAQ" + String(UnicodeScalar(symbol)) + "=="
            if Base64.decode(twoSymbols) != expectedTwo || Base64.decodeURLNoPadding(twoSymbols) != expectedTwo
                || Base64.decode(padded) != expectedTwo || Base64.decode(threeSymbols) != expectedThree
                || Base64.decodeURLNoPadding(("x." + threeSymbols).dropFirst(2)) != expectedThree
            {
                wrong.append(String(UnicodeScalar(symbol)))
            }
        }
        #expect(wrong.isEmpty)
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

    @Test("arrays, slices and other sequences encode every byte value alike")
    func encodesEveryByteValueFromAnySequence() {
        let everyByte = (0...255).map { UInt8($0) }
        let expected = everyByte.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(Hex.encode(everyByte) == expected)
        #expect(Hex.encode(everyByte[16..<32]) == expected.dropFirst(32).prefix(32))
        #expect(Hex.encode(everyByte.lazy.map { $0 }) == expected)
        #expect(Hex.encode(everyByte.reversed()) == everyByte.reversed().map { Hex.encode([$0]) }.joined())
        #expect(Hex.encode([UInt8]()).isEmpty)
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

    @Test("every byte value is a digit at either position exactly when it is hex (lowercase only when asked)")
    func everyByteValue() {
        let lowercase = Set("0123456789abcdef".utf8)
        let anyCase = lowercase.union("ABCDEF".utf8)
        var wrong: [UInt8] = []
        for byte in (0...255).map({ UInt8($0) }) {
            for text in [[byte, UInt8(ascii: "a")], [UInt8(ascii: "0"), byte]] {
                let string = String(decoding: text, as: UTF8.self)
                // Bytes that are not UTF-8 by themselves become U+FFFD: never a digit.
                let valid = string.utf8.count == 2
                if (Hex.decode(string) != nil) != (valid && anyCase.contains(byte))
                    || (Hex.decode(string, lowercaseOnly: true) != nil) != (valid && lowercase.contains(byte))
                {
                    wrong.append(byte)
                }
            }
        }
        #expect(wrong.isEmpty)
        #expect(Hex.decode("fF0a"[...]) == [0xff, 0x0a])
    }

    @Test("byteCount accepts exactly twice as many digits and keeps the lowercase rule")
    func exactByteCount() {
        let id = String(repeating: "ab", count: 32)
        #expect(Hex.decode(id, byteCount: 32, lowercaseOnly: true) == [UInt8](repeating: 0xab, count: 32))
        #expect(Hex.decode(id, byteCount: 31, lowercaseOnly: true) == nil)
        #expect(Hex.decode(id, byteCount: 33, lowercaseOnly: true) == nil)
        #expect(Hex.decode(String(id.dropLast()), byteCount: 32, lowercaseOnly: true) == nil)
        #expect(Hex.decode(id.uppercased(), byteCount: 32, lowercaseOnly: true) == nil)
        #expect(Hex.decode(id.uppercased(), byteCount: 32) == [UInt8](repeating: 0xab, count: 32))
        #expect(Hex.decode(String(repeating: "g", count: 64), byteCount: 32, lowercaseOnly: true) == nil)
    }
}

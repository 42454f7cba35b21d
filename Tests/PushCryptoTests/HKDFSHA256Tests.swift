import Testing

@testable import PushCrypto

@Suite("HKDF-SHA-256")
struct HKDFSHA256Tests {
    /// RFC 5869 Appendix A: salt, IKM, info, L, PRK, OKM.
    static let rfc5869Cases: [(salt: String, ikm: String, info: String, length: Int, prk: String, okm: String)] = [
        (
            "000102030405060708090a0b0c", String(repeating: "0b", count: 22), "f0f1f2f3f4f5f6f7f8f9", 42,
            "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
        ),
        (
            Hex.encode(Array(0x60...0xaf) as [UInt8]), Hex.encode(Array(0x00...0x4f) as [UInt8]),
            Hex.encode(Array(0xb0...0xff) as [UInt8]), 82,
            "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
            "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09"
                + "da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"
        ),
        (
            "", String(repeating: "0b", count: 22), "", 42,
            "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
            "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"
        ),
    ]

    @Test("Extract and Expand reproduce RFC 5869's SHA-256 test cases 1, 2 and 3", arguments: 0..<3)
    func rfc5869(index: Int) throws {
        let vector = Self.rfc5869Cases[index]
        let prk = HKDFSHA256.extract(salt: Hex.decode(vector.salt)!, inputKeyMaterial: Hex.decode(vector.ikm)!)
        #expect(Hex.encode(prk) == vector.prk)
        let okm = try HKDFSHA256.expand(pseudorandomKey: prk, info: Hex.decode(vector.info)!, byteCount: vector.length)
        #expect(Hex.encode(okm) == vector.okm)
        let derived = try HKDFSHA256.deriveKey(
            salt: Hex.decode(vector.salt)!, inputKeyMaterial: Hex.decode(vector.ikm)!, info: Hex.decode(vector.info)!,
            byteCount: vector.length)
        #expect(derived == okm)
    }

    @Test("the Marmot Push v1 token key of shared_x 0x00..0x1f is Transponder's known answer")
    func marmotTokenKey() throws {
        let key = try HKDFSHA256.deriveKey(
            salt: Array("marmot-push-token-v1".utf8), inputKeyMaterial: Array(0...31) as [UInt8],
            info: Array("marmot-push-token-encryption".utf8), byteCount: 32)
        #expect(Hex.encode(key) == "954b9d7be996c0e74517fe49e41e1278f44395d2855a52f50b5e322976dd168d")
    }

    @Test("Expand refuses a length of 0 or over 255 blocks and a pseudorandom key under 32 bytes")
    func expandBounds() {
        let prk = [UInt8](repeating: 7, count: 32)
        #expect(throws: CryptoError(.invalidInput)) {
            try HKDFSHA256.expand(pseudorandomKey: prk, info: [], byteCount: 0)
        }
        #expect(throws: CryptoError(.invalidInput)) {
            try HKDFSHA256.expand(pseudorandomKey: prk, info: [], byteCount: 255 * 32 + 1)
        }
        #expect(throws: CryptoError(.invalidKey)) {
            try HKDFSHA256.expand(pseudorandomKey: prk.dropLast(), info: [], byteCount: 32)
        }
        #expect((try? HKDFSHA256.expand(pseudorandomKey: prk, info: [], byteCount: 255 * 32))?.count == 255 * 32)
    }
}

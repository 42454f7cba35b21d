import Testing

@testable import PushCrypto

@Suite("ChaCha20 and ChaCha20-Poly1305 (RFC 8439)")
struct ChaCha20Tests {
    static let sunscreen = Array(
        "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it."
            .utf8)

    @Test("the key stream of block 1 is RFC 8439 §2.3.2's serialized block")
    func blockFunction() throws {
        let stream = try ChaCha20.apply(
            key: Array(0...31), nonce: Hex.decode("000000090000004a00000000")!, initialCounter: 1,
            to: [UInt8](repeating: 0, count: 64))
        #expect(
            Hex.encode(stream)
                == "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
                + "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")
    }

    @Test("encryption from counter 1 reproduces RFC 8439 §2.4.2, and applying it again decrypts")
    func encryption() throws {
        let key: [UInt8] = Array(0...31)
        let nonce = Hex.decode("000000000000004a00000000")!
        let ciphertext = try ChaCha20.apply(key: key, nonce: nonce, initialCounter: 1, to: Self.sunscreen)
        #expect(
            Hex.encode(ciphertext)
                == "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b357"
                + "1639d624e65152ab8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
                + "5af90bbf74a35be6b40b8eedf2785e42874d")
        #expect(try ChaCha20.apply(key: key, nonce: nonce, initialCounter: 1, to: ciphertext) == Self.sunscreen)
    }

    @Test("the all-zero key and nonce from counter 0 give RFC 8439 A.1's first key stream block")
    func zeroKeyStream() throws {
        let stream = try ChaCha20.apply(
            key: [UInt8](repeating: 0, count: 32), nonce: [UInt8](repeating: 0, count: 12),
            to: [UInt8](repeating: 0, count: 64))
        #expect(
            Hex.encode(stream)
                == "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
                + "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586")
    }

    @Test("ChaCha20 refuses a key or nonce of the wrong length")
    func chaCha20Lengths() {
        #expect(throws: CryptoError(.invalidKey)) {
            try ChaCha20.apply(key: [UInt8](repeating: 0, count: 31), nonce: [UInt8](repeating: 0, count: 12), to: [1])
        }
        #expect(throws: CryptoError(.invalidInput)) {
            try ChaCha20.apply(key: [UInt8](repeating: 0, count: 32), nonce: [UInt8](repeating: 0, count: 16), to: [1])
        }
    }

    static let aeadKey: [UInt8] = Array(0x80...0x9f)
    static let aeadNonce = Hex.decode("070000004041424344454647")!
    static let aeadAdditionalData = Hex.decode("50515253c0c1c2c3c4c5c6c7")!
    static let aeadSealed = Hex.decode(
        "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b"
            + "1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
            + "3ff4def08e4b7a9de576d26586cec64b6116" + "1ae10b594f09e26a7e902ecbd0600691")!

    @Test("seal reproduces RFC 8439 §2.8.2's ciphertext and tag, and open reverses it")
    func aeadKnownAnswer() throws {
        let sealed = try ChaCha20Poly1305.seal(
            key: Self.aeadKey, nonce: Self.aeadNonce, plaintext: Self.sunscreen, additionalData: Self.aeadAdditionalData
        )
        #expect(sealed == Self.aeadSealed)
        let opened = try ChaCha20Poly1305.open(
            key: Self.aeadKey, nonce: Self.aeadNonce, ciphertextAndTag: Self.aeadSealed,
            additionalData: Self.aeadAdditionalData)
        #expect(opened == Self.sunscreen)
    }

    @Test(
        "open refuses a flipped ciphertext or tag bit, other additional data, a short input", arguments: [0, 113, 129])
    func aeadTampering(flippedByte: Int) {
        var tampered = Self.aeadSealed
        tampered[flippedByte] ^= 0x01
        #expect(throws: CryptoError(.authenticationFailed)) {
            try ChaCha20Poly1305.open(
                key: Self.aeadKey, nonce: Self.aeadNonce, ciphertextAndTag: tampered,
                additionalData: Self.aeadAdditionalData)
        }
        #expect(throws: CryptoError(.authenticationFailed)) {
            try ChaCha20Poly1305.open(key: Self.aeadKey, nonce: Self.aeadNonce, ciphertextAndTag: Self.aeadSealed)
        }
        #expect(throws: CryptoError(.authenticationFailed)) {
            try ChaCha20Poly1305.open(
                key: Self.aeadKey, nonce: Self.aeadNonce, ciphertextAndTag: Self.aeadSealed.prefix(15))
        }
    }

    @Test("an empty plaintext seals to a tag alone that opens to nothing")
    func aeadEmpty() throws {
        let key = [UInt8](repeating: 1, count: 32)
        let nonce = [UInt8](repeating: 2, count: 12)
        let sealed = try ChaCha20Poly1305.seal(key: key, nonce: nonce, plaintext: [])
        #expect(sealed.count == 16)
        #expect(try ChaCha20Poly1305.open(key: key, nonce: nonce, ciphertextAndTag: sealed).isEmpty)
    }
}

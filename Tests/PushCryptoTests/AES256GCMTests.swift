import Testing

@testable import PushCrypto

@Suite("AES-256-GCM")
struct AES256GCMTests {
    // "The Galois/Counter Mode of Operation (GCM)", McGrew & Viega, test case 16 (AES-256, 96-bit IV, AAD).
    let key = Hex.decode("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")!
    let nonce = Hex.decode("cafebabefacedbaddecaf888")!
    let plaintext = Hex.decode(
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
    )!
    let additionalData = Hex.decode("feedfacedeadbeeffeedfacedeadbeefabaddad2")!
    let ciphertext = Hex.decode(
        "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
    )!
    let tag = Hex.decode("76fc6ece0f4e1768cddf8853bb2d551b")!

    @Test("seal reproduces the GCM specification's test case 16")
    func sealKnownAnswer() throws {
        let box = try AES256GCM.seal(key: key, nonce: nonce, plaintext: plaintext, additionalData: additionalData)
        #expect(box.ciphertext == ciphertext)
        #expect(box.tag == tag)
    }

    @Test("open recovers test case 16's plaintext")
    func openKnownAnswer() throws {
        let box = AES256GCM.SealedBox(ciphertext: ciphertext, tag: tag)
        #expect(try AES256GCM.open(box, key: key, nonce: nonce, additionalData: additionalData) == plaintext)
    }

    @Test("the one fetched AES-256-GCM gives every concurrent task test case 16 both ways")
    func concurrentKnownAnswers() async {
        let (key, nonce, plaintext, additionalData, ciphertext, tag) =
            (key, nonce, plaintext, additionalData, ciphertext, tag)
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    (0..<100).filter { _ in
                        let box = try? AES256GCM.seal(
                            key: key, nonce: nonce, plaintext: plaintext, additionalData: additionalData)
                        let opened = try? AES256GCM.open(
                            AES256GCM.SealedBox(ciphertext: ciphertext, tag: tag), key: key, nonce: nonce,
                            additionalData: additionalData)
                        return box != AES256GCM.SealedBox(ciphertext: ciphertext, tag: tag) || opened != plaintext
                    }.count
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    @Test("empty plaintext and empty AAD match test case 13")
    func emptyKnownAnswer() throws {
        let box = try AES256GCM.seal(
            key: [UInt8](repeating: 0, count: 32), nonce: [UInt8](repeating: 0, count: 12), plaintext: [],
            additionalData: [])
        #expect(box.ciphertext.isEmpty)
        #expect(Hex.encode(box.tag) == "530f8afbc74536b9a963b4f1c4cb738b")
    }

    @Test("any change to ciphertext, tag, AAD, nonce or key fails authentication")
    func tamperingFails() {
        let box = AES256GCM.SealedBox(ciphertext: ciphertext, tag: tag)
        var flippedCiphertext = ciphertext
        flippedCiphertext[0] ^= 1
        var flippedTag = tag
        flippedTag[15] ^= 0x80
        var otherKey = key
        otherKey[31] ^= 1
        let cases: [(AES256GCM.SealedBox, [UInt8], [UInt8], [UInt8])] = [
            (.init(ciphertext: flippedCiphertext, tag: tag), key, nonce, additionalData),
            (.init(ciphertext: ciphertext, tag: flippedTag), key, nonce, additionalData),
            (box, key, nonce, additionalData + [0]),
            (box, key, [UInt8](repeating: 0, count: 12), additionalData),
            (box, otherKey, nonce, additionalData),
            (.init(ciphertext: ciphertext, tag: Array(tag.prefix(12))), key, nonce, additionalData),
        ]
        for (candidate, candidateKey, candidateNonce, candidateData) in cases {
            #expect(throws: CryptoError(.authenticationFailed)) {
                try AES256GCM.open(candidate, key: candidateKey, nonce: candidateNonce, additionalData: candidateData)
            }
        }
    }

    @Test("keys other than 32 bytes are refused")
    func wrongKeyLength() {
        #expect(throws: CryptoError(.invalidKey)) {
            try AES256GCM.seal(key: [UInt8](repeating: 0, count: 16), nonce: nonce, plaintext: [1], additionalData: [])
        }
    }

    @Test("the combined nonce ‖ ciphertext ‖ tag form opens test case 16 and refuses it shortened or tampered")
    func combinedKnownAnswer() throws {
        let sealed = nonce + ciphertext + tag
        #expect(try AES256GCM.open(nonceCiphertextTag: sealed, key: key, additionalData: additionalData) == plaintext)
        var tampered = sealed
        tampered[tampered.count - 1] ^= 1
        for candidate in [tampered, Array(sealed.prefix(27)), Array(sealed.dropFirst())] {
            #expect(throws: CryptoError(.authenticationFailed)) {
                try AES256GCM.open(nonceCiphertextTag: candidate, key: key, additionalData: additionalData)
            }
        }
        #expect(throws: CryptoError(.invalidKey)) {
            try AES256GCM.open(nonceCiphertextTag: sealed, key: Array(key.prefix(16)), additionalData: additionalData)
        }
    }

    @Test("reused decryption contexts open like fresh ones across keys, sizes and failed opens")
    func reusedContexts() throws {
        let boxes = try (0..<40).map {
            round -> (key: [UInt8], nonce: [UInt8], plaintext: [UInt8], box: AES256GCM.SealedBox) in
            let key = try SecureRandom.bytes(32)
            let nonce = try SecureRandom.bytes(12)
            let plaintext = try SecureRandom.bytes(round * 7)
            return (
                key, nonce, plaintext,
                try AES256GCM.seal(key: key, nonce: nonce, plaintext: plaintext, additionalData: [UInt8(round)])
            )
        }
        for (round, sealed) in boxes.enumerated() {
            // Every third open fails at the tag check first, leaving its context finished unsuccessfully.
            if round % 3 == 0 {
                var tag = sealed.box.tag
                tag[0] ^= 1
                #expect(throws: CryptoError(.authenticationFailed)) {
                    try AES256GCM.open(
                        AES256GCM.SealedBox(ciphertext: sealed.box.ciphertext, tag: tag), key: sealed.key,
                        nonce: sealed.nonce, additionalData: [UInt8(round)])
                }
            }
            #expect(
                try AES256GCM.open(sealed.box, key: sealed.key, nonce: sealed.nonce, additionalData: [UInt8(round)])
                    == sealed.plaintext)
            #expect(throws: CryptoError(.authenticationFailed)) {
                try AES256GCM.open(sealed.box, key: sealed.key, nonce: sealed.nonce, additionalData: [UInt8(round) ^ 1])
            }
        }
        #expect(
            try AES256GCM.open(
                AES256GCM.SealedBox(ciphertext: ciphertext, tag: tag), key: key, nonce: nonce,
                additionalData: additionalData) == plaintext)
        #expect(DecryptionContexts.shared.spareCount > 0)
    }
}

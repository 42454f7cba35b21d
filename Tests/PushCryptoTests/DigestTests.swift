import PushCrypto
import Testing

@Suite("SHA-256, HMAC-SHA-256 and constant-time comparison")
struct DigestTests {
    @Test("SHA-256 matches the FIPS 180-4 examples")
    func sha256KnownAnswers() {
        #expect(
            Hex.encode(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            Hex.encode(SHA256.hash(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            Hex.encode(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("SHA-256 of a million 'a' (FIPS 180-4 long example) spans many blocks")
    func sha256MillionA() {
        #expect(
            Hex.encode(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("SHA-256 of a slice and of a non-contiguous collection hashes exactly their elements")
    func sha256OfSlicesAndSequences() {
        let framed = Array("xxabcyy".utf8)
        #expect(
            Hex.encode(SHA256.hash(framed[2..<5]))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            Hex.encode(SHA256.hash("abc".utf8))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("the one fetched SHA-256 gives every concurrent task the FIPS 180-4 digest")
    func sha256Concurrency() async {
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    (0..<200).filter { _ in
                        Hex.encode(SHA256.hash(Array("abc".utf8)))
                            != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
                    }.count
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    struct HMACCase: Sendable, CustomTestStringConvertible {
        let name: String
        let key: [UInt8]
        let data: [UInt8]
        let tagHex: String
        var testDescription: String { name }
    }

    // RFC 4231 §4, HMAC-SHA-256 outputs (test case 5 truncates its output and is not applicable).
    static let rfc4231: [HMACCase] = [
        HMACCase(
            name: "test case 1", key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8),
            tagHex: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        HMACCase(
            name: "test case 2", key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
            tagHex: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        HMACCase(
            name: "test case 3", key: [UInt8](repeating: 0xaa, count: 20), data: [UInt8](repeating: 0xdd, count: 50),
            tagHex: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        HMACCase(
            name: "test case 4", key: (1...25).map { UInt8($0) }, data: [UInt8](repeating: 0xcd, count: 50),
            tagHex: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        HMACCase(
            name: "test case 6", key: [UInt8](repeating: 0xaa, count: 131),
            data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            tagHex: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        HMACCase(
            name: "test case 7", key: [UInt8](repeating: 0xaa, count: 131),
            data: Array(
                ("This is a test using a larger than block-size key and a larger than block-size data. The key "
                    + "needs to be hashed before being used by the HMAC algorithm.").utf8),
            tagHex: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test("HMAC-SHA-256 matches RFC 4231", arguments: rfc4231)
    func hmacKnownAnswers(testCase: HMACCase) {
        #expect(Hex.encode(HMACSHA256.authenticationCode(key: testCase.key, message: testCase.data)) == testCase.tagHex)
    }

    @Test("a prepared HMAC-SHA-256 key matches RFC 4231", arguments: rfc4231)
    func preparedKeyKnownAnswers(testCase: HMACCase) {
        let key = HMACSHA256.Key(testCase.key)
        #expect(Hex.encode(key.authenticationCode(testCase.data)) == testCase.tagHex)
        // A second message under the same key starts from the keyed state again, not from the first message's.
        #expect(Hex.encode(key.authenticationCode(testCase.data)) == testCase.tagHex)
    }

    @Test("a prepared key tags each message independently, whatever came before")
    func preparedKeyReuse() {
        let key = HMACSHA256.Key(Array("Jefe".utf8))
        let first = key.authenticationCode(Array("what do ya want ".utf8))
        let whole = key.authenticationCode(Array("what do ya want for nothing?".utf8))
        #expect(Hex.encode(whole) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            first == HMACSHA256.authenticationCode(key: Array("Jefe".utf8), message: Array("what do ya want ".utf8)))
        // A non-contiguous collection is tagged like its bytes.
        let message = Array("what do ya want for nothing?".utf8)
        #expect(key.authenticationCode(message.reversed().reversed()) == whole)
    }

    @Test("a prepared key's reused contexts tag a long run of messages of every length like the one-shot function")
    func preparedKeyRunOfMessages() {
        let keyBytes = Array("a key whose contexts are restarted, not duplicated".utf8)
        let key = HMACSHA256.Key(keyBytes)
        var generator = SystemRandomNumberGenerator()
        for length in (0..<150).shuffled(using: &generator) {
            let message = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            #expect(key.authenticationCode(message) == HMACSHA256.authenticationCode(key: keyBytes, message: message))
        }
    }

    @Test("a prepared key accepts an empty key and an empty message")
    func preparedKeyEmptyInputs() {
        // Known answer computed with Python's hmac module: hmac.new(b"", b"", sha256).
        #expect(
            Hex.encode(HMACSHA256.Key([UInt8]()).authenticationCode([UInt8]()))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test("one prepared key shared by concurrent tasks gives every task the one-shot tag")
    func preparedKeyConcurrency() async {
        let keyBytes = (0..<32).map { UInt8($0) }
        let key = HMACSHA256.Key(keyBytes)
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for task in 0..<16 {
                group.addTask {
                    var mismatches = 0
                    for index in 0..<200 {
                        let message = Array("task \(task) message \(index)".utf8)
                        if key.authenticationCode(message)
                            != HMACSHA256.authenticationCode(key: keyBytes, message: message)
                        {
                            mismatches += 1
                        }
                    }
                    return mismatches
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    @Test("HMAC-SHA-256 accepts an empty key and an empty message")
    func hmacEmptyInputs() {
        // Known answer computed with Python's hmac module: hmac.new(b"", b"", sha256).
        #expect(
            Hex.encode(HMACSHA256.authenticationCode(key: [UInt8](), message: [UInt8]()))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test("constant-time comparison is equality of length and bytes")
    func constantTimeEquality() {
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
        #expect(ConstantTime.equals([UInt8](), [UInt8]()))
    }
}

import PushCrypto
import Testing

@testable import PushNostr

@Suite("Reference SHA-256 used by the tests")
struct ReferenceSHA256Tests {
    // FIPS 180-4 examples (NIST CSRC "SHA256.pdf") and the well-known empty-string digest.
    @Test(
        "matches the FIPS 180-4 known answers",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
        ])
    func knownAnswers(message: String, digest: String) {
        #expect(Hex.encode(ReferenceSHA256.hash(Array(message.utf8))) == digest)
    }

    @Test("hashes a million 'a' across many blocks")
    func millionA() {
        let digest = ReferenceSHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
        #expect(Hex.encode(digest) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}

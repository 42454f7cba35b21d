import Testing

@testable import PushNostr

@Suite("Strict standard base64")
struct StrictBase64Tests {
    // RFC 4648 §10 test vectors.
    @Test(
        "encodes and decodes the RFC 4648 vectors, padded and unpadded",
        arguments: [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ])
    func rfcVectors(plain: String, encoded: String) {
        #expect(StrictBase64.encode(Array(plain.utf8)) == encoded)
        #expect(StrictBase64.decode(encoded.utf8) == Array(plain.utf8))
        let unpadded = encoded.filter { $0 != "=" }
        #expect(StrictBase64.decode(unpadded.utf8) == Array(plain.utf8))
    }

    @Test("round-trips every byte value")
    func allBytes() {
        let bytes = (0...255).map { UInt8($0) }
        #expect(StrictBase64.decode(StrictBase64.encode(bytes).utf8) == bytes)
        #expect(StrictBase64.encode([0xfb, 0xff]) == "+/8=")
    }

    @Test(
        "refuses anything not canonical",
        arguments: [
            "Zg=", "Zg===", "Z===", "Z", "Zm9vY", "Zm9v=", "Zm9v====", "Zg==Zg==", "Zm9v Yg==", "Zm9v\nYg==",
            "-_8=", "Zh==", "Zm9=", "Zm9vYh", "Zm8=\0", "Zm8é",
        ])
    func refuses(text: String) {
        #expect(StrictBase64.decode(text.utf8) == nil)
    }
}

import PushJSON
import Testing

@Suite("UTF-8 byte equality")
struct UTF8EqualityTests {
    @Test("equal bytes are equal; canonically equivalent but different bytes are not")
    func bytesNotCanonicalEquivalence() {
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(precomposed == decomposed)
        #expect(!UTF8Equality.equal(precomposed, decomposed))
        #expect(UTF8Equality.equal(precomposed, "caf\u{E9}"))
        #expect(UTF8Equality.equal("", ""))
        #expect(!UTF8Equality.equal("payload", "payloaD"))
        #expect(!UTF8Equality.equal("u", "ul"))
    }

    @Test("long native strings, substrings made strings and small strings compare alike")
    func storageKinds() {
        let long = String(repeating: "https://push.example/v1/deliveries/apns?", count: 4)
        let rebuilt = String(("x" + long).dropFirst())
        #expect(UTF8Equality.equal(long, rebuilt))
        var changed = Array(long.utf8)
        changed[changed.count - 1] ^= 1
        #expect(!UTF8Equality.equal(long, String(decoding: changed, as: UTF8.self)))
        #expect(UTF8Equality.equal("method", String("xmethod".dropFirst())))
    }
}

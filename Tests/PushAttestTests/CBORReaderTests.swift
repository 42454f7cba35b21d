import PushTestSupport
import Testing

@testable import PushAttest

@Suite("Strict bounded CBOR reader", .testBodyThreads)
struct CBORReaderTests {
    static let generous = CBORLimits(maximumByteCount: 1 << 20, maximumDepth: 16, maximumItemCount: 1 << 16)

    static func decode(_ bytes: [UInt8], limits: CBORLimits = generous) throws(AppAttestError) -> CBORValue {
        try CBORReader.decode(bytes, limits: limits)
    }

    static func code(of bytes: [UInt8], limits: CBORLimits = generous) -> AppAttestError.Code? {
        do {
            _ = try decode(bytes, limits: limits)
            return nil
        } catch {
            return error.code
        }
    }

    @Test("decodes every supported kind, including 8-byte integers and negative numbers")
    func decodesSupportedKinds() throws {
        let item = SyntheticCBOR.map([
            (.text("u"), .unsigned(UInt64.max)), (.text("n"), .negative(0)), (.text("b"), .bytes([1, 2, 3])),
            (.text("t"), .text("é✓")), (.text("a"), .array([.unsigned(23), .unsigned(24), .unsigned(256)])),
            (.text("m"), .map([(.unsigned(1), .boolean(true)), (.negative(6), .boolean(false))])),
            (.text("l"), .bytes([UInt8](repeating: 7, count: 300))),
        ])
        let decoded = try Self.decode(item.encoded)
        #expect(decoded[textKey: "u"] == .unsigned(UInt64.max))
        #expect(decoded[textKey: "n"] == .negative(0))
        #expect(decoded[textKey: "b"] == .bytes([1, 2, 3]))
        #expect(decoded[textKey: "t"] == .text("é✓"))
        #expect(decoded[textKey: "a"] == .array([.unsigned(23), .unsigned(24), .unsigned(256)]))
        #expect(
            decoded[textKey: "m"]
                == .map([
                    CBORMapEntry(key: .unsigned(1), value: .boolean(true)),
                    CBORMapEntry(key: .negative(6), value: .boolean(false)),
                ]))
        #expect(decoded[textKey: "l"]?.byteString?.count == 300)
        #expect(decoded.textKeys == ["u", "n", "b", "t", "a", "m", "l"])
    }

    @Test(
        "refuses indefinite lengths",
        arguments: [
            [0x5f, 0x41, 0x00, 0xff], [0x7f, 0x61, 0x61, 0xff], [0x9f, 0x01, 0xff], [0xbf, 0x01, 0x02, 0xff], [0xff],
        ] as [[UInt8]])
    func refusesIndefiniteLengths(bytes: [UInt8]) {
        #expect(Self.code(of: bytes) == .indefiniteLength)
    }

    @Test("refuses duplicate map keys, textual and numeric, also when nested")
    func refusesDuplicateKeys() {
        let text = SyntheticCBOR.map([(.text("a"), .unsigned(1)), (.text("a"), .unsigned(2))]).encoded
        let numeric = SyntheticCBOR.map([(.negative(1), .unsigned(1)), (.negative(1), .unsigned(1))]).encoded
        let nested = SyntheticCBOR.array([
            .map([(.text("x"), .unsigned(1)), (.text("y"), .unsigned(1)), (.text("x"), .unsigned(1))])
        ]).encoded
        #expect(Self.code(of: text) == .duplicateKey)
        #expect(Self.code(of: numeric) == .duplicateKey)
        #expect(Self.code(of: nested) == .duplicateKey)
        // Equal values under different keys are fine.
        #expect(
            Self.code(of: SyntheticCBOR.map([(.text("a"), .unsigned(1)), (.text("b"), .unsigned(1))]).encoded) == nil)
    }

    @Test("refuses bytes after the top-level item")
    func refusesTrailingBytes() {
        #expect(Self.code(of: [0x01, 0x00]) == .trailingBytes)
        #expect(Self.code(of: SyntheticCBOR.map([(.text("a"), .unsigned(1))]).encoded + [0xa0]) == .trailingBytes)
    }

    @Test("every proper prefix of a valid object is truncated")
    func refusesEveryTruncation() {
        let item = SyntheticCBOR.map([
            (.text("signature"), .bytes([UInt8](repeating: 1, count: 70))),
            (.text("nested"), .array([.unsigned(0x1_0000_0000), .text("abc"), .negative(300)])),
        ]).encoded
        for length in 0..<item.count {
            #expect(Self.code(of: Array(item.prefix(length))) == .truncated, "prefix of \(length) bytes")
        }
    }

    @Test(
        "refuses huge declared lengths and counts without allocating",
        arguments: [
            [0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], [0x7a, 0xff, 0xff, 0xff, 0xff, 0x61],
            [0x9b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            [0xbb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            [0x59, 0x01, 0x00, 0x01],
        ] as [[UInt8]])
    func refusesHugeLengths(bytes: [UInt8]) {
        #expect(Self.code(of: bytes) == .truncated)
    }

    @Test(
        "refuses integers, lengths and counts that are not in shortest form",
        arguments: [
            [0x18, 0x17], [0x19, 0x00, 0xff], [0x1a, 0x00, 0x00, 0xff, 0xff],
            [0x1b, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff],
            [0x38, 0x00], [0x58, 0x01, 0xaa], [0x78, 0x00], [0x98, 0x00], [0xb8, 0x00],
        ] as [[UInt8]])
    func refusesNonShortestForms(bytes: [UInt8]) {
        #expect(Self.code(of: bytes) == .nonShortestEncoding)
    }

    @Test(
        "refuses tags, floats, null, undefined and other simple values",
        arguments: [
            [0xc0, 0x60], [0xd8, 0x18, 0x40], [0xf6], [0xf7], [0xf0], [0xf8, 0x20], [0xf9, 0x3c, 0x00],
            [0xfa, 0x3f, 0x80, 0x00, 0x00], [0xfb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0],
        ] as [[UInt8]])
    func refusesUnsupportedTypes(bytes: [UInt8]) {
        #expect(Self.code(of: bytes) == .unsupportedType)
    }

    @Test("refuses reserved additional information 28 to 30", arguments: [0x1c, 0x3d, 0x5e, 0x9c] as [UInt8])
    func refusesReservedAdditionalInformation(initial: UInt8) {
        #expect(Self.code(of: [initial, 0, 0, 0, 0, 0, 0, 0, 0]) == .reservedAdditionalInformation)
    }

    @Test("refuses text that is not UTF-8")
    func refusesInvalidUTF8() {
        #expect(Self.code(of: [0x62, 0xc3, 0x28]) == .invalidUTF8)
        #expect(Self.code(of: [0x63, 0xed, 0xa0, 0x80]) == .invalidUTF8)
    }

    @Test("enforces the size, depth and item limits exactly")
    func enforcesLimits() {
        let limits = CBORLimits(maximumByteCount: 10, maximumDepth: 3, maximumItemCount: 5)
        #expect(Self.code(of: SyntheticCBOR.bytes([UInt8](repeating: 0, count: 9)).encoded, limits: limits) == nil)
        #expect(
            Self.code(of: SyntheticCBOR.bytes([UInt8](repeating: 0, count: 10)).encoded, limits: limits)
                == .inputTooLarge)
        #expect(Self.code(of: SyntheticCBOR.array([.array([.unsigned(1)])]).encoded, limits: limits) == nil)
        #expect(Self.code(of: SyntheticCBOR.array([.array([.array([])])]).encoded, limits: limits) == nil)
        #expect(
            Self.code(of: SyntheticCBOR.array([.array([.array([.unsigned(1)])])]).encoded, limits: limits)
                == .nestingTooDeep)
        #expect(
            Self.code(
                of: SyntheticCBOR.array([.unsigned(1), .unsigned(2), .unsigned(3), .unsigned(4)]).encoded,
                limits: limits) == nil)
        #expect(
            Self.code(
                of: SyntheticCBOR.array([.unsigned(1), .unsigned(2), .unsigned(3), .unsigned(4), .unsigned(5)]).encoded,
                limits: limits) == .tooManyItems)
    }

    @Test("deep nesting of a hostile input stops at the depth limit")
    func hostileNesting() {
        let bytes = [UInt8](repeating: 0x81, count: 10_000) + [0x00]
        #expect(Self.code(of: bytes, limits: CBORLimits.attestationObject) == .nestingTooDeep)
    }

    @Test("the built-in limits follow docs/protocol.md §1 sizes")
    func builtInLimits() {
        #expect(CBORLimits.attestationObject.maximumByteCount == 16384)
        #expect(CBORLimits.assertion.maximumByteCount == 1024)
    }
}

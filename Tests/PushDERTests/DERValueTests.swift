import Testing

@testable import PushDER

@Suite("DER writer (X.690 §10) that the demo and the tests build KeyDescriptions with")
struct DERValueTests {
    @Test("integers are minimal two's complement: a leading 00 only before a set top bit, ff only before a clear one")
    func minimalIntegers() {
        #expect(DERValue.integer(0).encoded == [0x02, 0x01, 0x00])
        #expect(DERValue.integer(127).encoded == [0x02, 0x01, 0x7f])
        #expect(DERValue.integer(128).encoded == [0x02, 0x02, 0x00, 0x80])
        #expect(DERValue.integer(-128).encoded == [0x02, 0x01, 0x80])
        #expect(DERValue.integer(-129).encoded == [0x02, 0x02, 0xff, 0x7f])
        #expect(DERValue.enumerated(1).encoded == [0x0a, 0x01, 0x01])
    }

    @Test("lengths from 128 take the long form with the fewest octets")
    func shortestLengths() {
        #expect(DERValue.length(127) == [0x7f])
        #expect(DERValue.length(128) == [0x81, 0x80])
        #expect(DERValue.length(256) == [0x82, 0x01, 0x00])
        #expect(DERValue.octets([UInt8](repeating: 7, count: 200)).encoded.prefix(3) == [0x04, 0x81, 0xc8])
    }

    @Test("[n] EXPLICIT uses the high-tag-number form from 31: Android's [709] is bf 85 45")
    func highTagNumbers() {
        #expect(DERValue.explicit(30, .null).encoded == [0xbe, 0x02, 0x05, 0x00])
        #expect(DERValue.explicit(709, .null).encoded == [0xbf, 0x85, 0x45, 0x02, 0x05, 0x00])
        #expect(DERValue.identifier(DERTag(.private, number: 31, isConstructed: false)) == [0xdf, 0x1f])
    }

    @Test("a SET OF sorts its members by their encodings, whatever order they were given in")
    func setOfIsSorted() {
        #expect(DERValue.set([.integer(2), .integer(1)]).encoded == [0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02])
    }

    @Test("what the writer builds, the strict reader accepts and reads back value for value")
    func readerReadsWhatTheWriterWrites() throws {
        let value = DERValue.sequence([
            .integer(-300), .enumerated(2), .boolean(true), .null, .octets([1, 2, 3]),
            .set([.octets([9]), .integer(5)]), .explicit(709, .integer(1_767_225_600_000)),
        ])
        let element = try DER.parse(value.encoded, limits: DERLimits(maximumByteCount: 4096, maximumDepth: 8))
        var members = try element.reader(expecting: .sequence)
        #expect(try members.read(.integer).integer() == -300)
        #expect(try members.read(.enumerated).enumerated() == 2)
        #expect(try members.read(.boolean).boolean())
        try members.read(.null).null()
        #expect(Array(try members.read(.octetString).octetString()) == [1, 2, 3])
        var set = try members.read(.set).reader(expecting: .set)
        #expect(try set.read(.integer).integer() == 5)
        #expect(Array(try set.read(.octetString).octetString()) == [9])
        var explicit = try members.read(.contextSpecific(709)).reader(expecting: .contextSpecific(709))
        #expect(try explicit.read(.integer).integer() == 1_767_225_600_000)
        #expect(members.isAtEnd)
    }
}

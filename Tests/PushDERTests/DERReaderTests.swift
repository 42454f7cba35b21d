import Testing

@testable import PushDER

@Suite("Strict DER reader (X.690 §10)")
struct DERReaderTests {
    static let limits = DERLimits(maximumByteCount: 4096, maximumDepth: 8)

    func parse(_ bytes: [UInt8], limits: DERLimits = limits) throws(DERError) -> DERElement {
        try DER.parse(bytes, limits: limits)
    }

    func refusal(_ bytes: [UInt8], limits: DERLimits = limits) -> DERError.Code? {
        do {
            _ = try parse(bytes, limits: limits)
            return nil
        } catch {
            return error.code
        }
    }

    @Test("a nested SEQUENCE reads element by element, with slices of the whole input")
    func nestedSequence() throws {
        let bytes: [UInt8] = [0x30, 0x08, 0x02, 0x01, 0x05, 0x30, 0x03, 0x01, 0x01, 0xff]
        let outer = try parse(bytes)
        #expect(outer.tag == .sequence)
        #expect(outer.encoded.elementsEqual(bytes))
        var members = try outer.reader(expecting: .sequence)
        #expect(try members.read(.integer).integer() == 5)
        let inner = try members.read(.sequence)
        #expect(inner.offset == 5)
        var innerMembers = try inner.reader(expecting: .sequence)
        #expect(try innerMembers.read(.boolean).boolean())
        try innerMembers.finish()
        try members.finish()
    }

    @Test("high tag numbers: [709] EXPLICIT reads as context tag 709, and the largest four-octet number")
    func highTagNumbers() throws {
        let element = try parse([0xbf, 0x85, 0x45, 0x03, 0x02, 0x01, 0x07])
        #expect(element.tag == .contextSpecific(709))
        var inner = try element.reader(expecting: .contextSpecific(709))
        #expect(try inner.read(.integer).integer() == 7)
        let largest = try parse([0x9f, 0xff, 0xff, 0xff, 0x7f, 0x00])
        #expect(largest.tag == .contextSpecific((1 << 28) - 1, isConstructed: false))
        #expect(try parse([0x9f, 0x1f, 0x00]).tag.number == 31)
    }

    @Test("long-form lengths in their shortest form are read")
    func longFormLengths() throws {
        let contents = [UInt8](repeating: 0x61, count: 200)
        #expect(try parse([0x04, 0x81, 0xc8] + contents).octetString().elementsEqual(contents))
        let longer = [UInt8](repeating: 0x62, count: 300)
        #expect(try parse([0x04, 0x82, 0x01, 0x2c] + longer).octetString().count == 300)
    }

    @Test(
        "encodings DER forbids are refused with their reason",
        arguments: [
            ("indefinite length", [0x30, 0x80, 0x02, 0x01, 0x00, 0x00, 0x00], DERError.Code.indefiniteLength),
            ("long form for a short length", [0x04, 0x81, 0x05, 0x61, 0x62, 0x63, 0x64, 0x65], .nonMinimalLength),
            (
                "leading zero length octet", [0x04, 0x82, 0x00, 0x80] + [UInt8](repeating: 0, count: 128),
                .nonMinimalLength
            ),
            ("five length octets", [0x04, 0x85, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00], .nonMinimalLength),
            ("high-tag form for tag 30", [0x9f, 0x1e, 0x00], .nonMinimalTag),
            ("high-tag number with a leading 0x80", [0xbf, 0x80, 0x85, 0x45, 0x00], .nonMinimalTag),
            ("tag number over four octets", [0x9f, 0x81, 0x80, 0x80, 0x80, 0x00, 0x00], .unsupportedTag),
            ("end-of-contents tag", [0x00, 0x00], .unsupportedTag),
            // The differential run against pyasn1 found the constructed form of tag 0 accepted.
            ("end-of-contents tag in constructed form", [0x20, 0x00], .unsupportedTag),
            ("constructed tag 0 nested in a SEQUENCE", [0x30, 0x02, 0x20, 0x00], .unsupportedTag),
            ("trailing byte", [0x05, 0x00, 0x00], .trailingBytes),
            ("length past the end", [0x04, 0x05, 0x61], .truncated),
            ("child runs past its parent", [0x30, 0x03, 0x04, 0x05, 0x61], .truncated),
            ("identifier only", [0x30], .truncated),
            ("empty input", [], .truncated),
            ("unfinished high tag", [0x9f, 0x85], .truncated),
            ("constructed OCTET STRING", [0x24, 0x03, 0x04, 0x01, 0x61], .wrongForm),
            ("primitive SEQUENCE", [0x10, 0x00], .wrongForm),
            ("BOOLEAN 0x01", [0x01, 0x01, 0x01], .invalidContents),
            ("two-octet BOOLEAN", [0x01, 0x02, 0xff, 0xff], .invalidContents),
            ("INTEGER with a redundant 0x00", [0x02, 0x02, 0x00, 0x7f], .invalidContents),
            ("INTEGER with a redundant 0xff", [0x02, 0x02, 0xff, 0x80], .invalidContents),
            ("empty INTEGER", [0x02, 0x00], .invalidContents),
            ("empty ENUMERATED", [0x0a, 0x00], .invalidContents),
            ("NULL with contents", [0x05, 0x01, 0x00], .invalidContents),
            ("BIT STRING with 8 unused bits", [0x03, 0x02, 0x08, 0x00], .invalidContents),
            ("BIT STRING with set padding bits", [0x03, 0x02, 0x01, 0x01], .invalidContents),
            ("empty BIT STRING with unused bits", [0x03, 0x01, 0x01], .invalidContents),
            ("OID arc with a leading 0x80", [0x06, 0x02, 0x80, 0x01], .invalidContents),
            ("OID ending inside an arc", [0x06, 0x01, 0x81], .invalidContents),
            ("bad INTEGER nested in a SEQUENCE", [0x30, 0x04, 0x02, 0x02, 0x00, 0x01], .invalidContents),
        ] as [(String, [UInt8], DERError.Code)])
    func refusals(name: String, bytes: [UInt8], expected: DERError.Code) {
        #expect(refusal(bytes) == expected, "\(name)")
    }

    @Test("depth and size limits are enforced")
    func limits() {
        func nested(_ depth: Int) -> [UInt8] {
            (0..<depth).reduce([0x05, 0x00]) { inner, _ in [0x30, UInt8(inner.count)] + inner }
        }
        #expect(refusal(nested(7)) == nil)  // 7 SEQUENCEs around a NULL: depth 8
        #expect(refusal(nested(8)) == .tooDeep)
        let small = DERLimits(maximumByteCount: 4, maximumDepth: 8)
        #expect(refusal([0x04, 0x02, 0x61, 0x62], limits: small) == nil)
        #expect(refusal([0x04, 0x03, 0x61, 0x62, 0x63], limits: small) == .tooLarge)
    }

    @Test("typed reads check their tag and contents")
    func typedReads() throws {
        #expect(try parse([0x02, 0x01, 0x80]).integer() == -128)
        #expect(try parse([0x02, 0x02, 0x00, 0x80]).integer() == 128)
        #expect(try parse([0x02, 0x08, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).integer() == Int64.max)
        #expect(throws: DERError(.outOfRange, offset: 0)) {
            try parse([0x02, 0x09, 0x00, 0x80, 0, 0, 0, 0, 0, 0, 0]).integer()
        }
        #expect(try parse([0x0a, 0x01, 0x02]).enumerated() == 2)
        #expect(throws: DERError(.unexpectedTag, offset: 0)) { try parse([0x0a, 0x01, 0x02]).integer() }
        #expect(
            try parse([0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0xd6, 0x79, 0x02, 0x01, 0x11]).objectIdentifier()
                == "1.3.6.1.4.1.11129.2.1.17")
        #expect(try parse([0x06, 0x03, 0x55, 0x1d, 0x13]).objectIdentifier() == "2.5.29.19")
        #expect(try parse([0x06, 0x02, 0x88, 0x37]).objectIdentifier() == "2.999")
        #expect(try parse([0x03, 0x03, 0x00, 0xab, 0xcd]).bitStringOctets().elementsEqual([0xab, 0xcd]))
        #expect(throws: DERError(.invalidContents, offset: 0)) {
            try parse([0x03, 0x02, 0x01, 0x02]).bitStringOctets()
        }
        try parse([0x05, 0x00]).null()
    }

    @Test("times: UTCTime years 50–99 are 19xx, GeneralizedTime as written, nothing but …Z with seconds")
    func times() throws {
        func time(_ tag: UInt8, _ text: String) throws(DERError) -> Int64 {
            try parse([tag, UInt8(text.utf8.count)] + Array(text.utf8)).time()
        }
        #expect(try time(0x17, "700101000000Z") == 0)
        #expect(try time(0x17, "491231235959Z") == 2_524_607_999)
        #expect(try time(0x17, "500101000000Z") == -631_152_000)
        #expect(try time(0x18, "20480101000000Z") == 2_461_449_600)
        #expect(try time(0x18, "21060207062815Z") == 4_294_967_295)
        #expect(try time(0x18, "20240229120000Z") == 1_709_208_000)
        for bad in [
            "7001010000Z", "700101000000", "700101000000+0000", "701301000000Z", "700230000000Z", "700101240000Z",
        ] {
            #expect(throws: DERError.self, "\(bad)") { try time(0x17, bad) }
        }
        for bad in ["20230229000000Z", "20240101000000.5Z", "2024010100000Z"] {
            #expect(throws: DERError.self, "\(bad)") { try time(0x18, bad) }
        }
    }

    @Test("a reader reports a missing OPTIONAL without consuming, and trailing elements at finish")
    func optionalAndFinish() throws {
        var reader = DERReader([0x02, 0x01, 0x01, 0x05, 0x00][...])
        #expect(try reader.readIfPresent(.boolean) == nil)
        #expect(try reader.readIfPresent(.integer) != nil)
        #expect(throws: DERError(.trailingBytes, offset: 3)) { try reader.finish() }
        #expect(throws: DERError(.unexpectedTag, offset: 3)) { try reader.read(.integer) }
        try reader.read(.null).null()
        #expect(reader.isAtEnd)
        #expect(try reader.peekTag() == nil)
        #expect(throws: DERError(.truncated, offset: 5)) { try reader.next() }
    }
}

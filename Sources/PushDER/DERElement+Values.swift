/// Typed reads of one element. Each checks the tag and the DER contents rules itself, so an element
/// taken from a ``DERReader`` without ``DER/parse(_:limits:)`` is still read strictly.
extension DERElement {
    /// A reader over the contents of this constructed element, which must have `tag`.
    public func reader(expecting tag: DERTag) throws(DERError) -> DERReader {
        try requireTag(tag)
        return DERReader(contents)
    }

    public func boolean() throws(DERError) -> Bool {
        try requireTag(.boolean)
        try UniversalRules.checkBoolean(self)
        return contents.first == 0xff
    }

    /// An INTEGER that fits `Int64`.
    public func integer() throws(DERError) -> Int64 { try signedValue(tag: .integer) }

    /// An ENUMERATED value.
    public func enumerated() throws(DERError) -> Int64 { try signedValue(tag: .enumerated) }

    /// The minimal two's-complement contents of an INTEGER of any size (serial numbers).
    public func integerBytes() throws(DERError) -> ArraySlice<UInt8> {
        try requireTag(.integer)
        try UniversalRules.checkInteger(self)
        return contents
    }

    public func octetString() throws(DERError) -> ArraySlice<UInt8> {
        try requireTag(.octetString)
        return contents
    }

    public func null() throws(DERError) {
        try requireTag(.null)
        guard contents.isEmpty else { throw DERError(.invalidContents, offset: offset) }
    }

    /// A BIT STRING of whole octets (keys and signatures), without its unused-bits octet.
    public func bitStringOctets() throws(DERError) -> ArraySlice<UInt8> {
        try requireTag(.bitString)
        try UniversalRules.checkBitString(self)
        guard contents.first == 0 else { throw DERError(.invalidContents, offset: offset) }
        return contents.dropFirst()
    }

    /// An OBJECT IDENTIFIER in dotted decimal (`1.3.6.1.4.1.11129.2.1.17`).
    public func objectIdentifier() throws(DERError) -> String {
        try requireTag(.objectIdentifier)
        try UniversalRules.checkObjectIdentifier(self)
        var arcs: [UInt64] = []
        var arc: UInt64 = 0
        for byte in contents {
            guard arc >> 57 == 0 else { throw DERError(.outOfRange, offset: offset) }
            arc = arc << 7 | UInt64(byte & 0x7f)
            if byte & 0x80 == 0 {
                arcs.append(arc)
                arc = 0
            }
        }
        // The first subidentifier holds the first two arcs (X.690 §8.19.4).
        let first = arcs[0]
        let leading: [UInt64] = first < 40 ? [0, first] : first < 80 ? [1, first - 40] : [2, first - 80]
        return (leading + arcs.dropFirst()).map(String.init).joined(separator: ".")
    }

    /// A UTCTime or GeneralizedTime in the form RFC 5280 §4.1.2.5 requires (`YYMMDDHHMMSSZ`, years
    /// 50–99 as 19xx; `YYYYMMDDHHMMSSZ`), as Unix seconds.
    public func time() throws(DERError) -> Int64 {
        let digitCount: Int
        switch tag {
        case .utcTime: digitCount = 12
        case .generalizedTime: digitCount = 14
        default: throw DERError(.unexpectedTag, offset: offset)
        }
        let text = Array(contents)
        guard text.count == digitCount + 1, text.last == UInt8(ascii: "Z"),
            text.dropLast().allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { throw DERError(.invalidContents, offset: offset) }
        var fields = text.dropLast().map { Int64($0 - UInt8(ascii: "0")) }
        func take(_ count: Int) -> Int64 {
            defer { fields.removeFirst(count) }
            return fields.prefix(count).reduce(0) { $0 * 10 + $1 }
        }
        var year = take(digitCount - 10)
        if digitCount == 12 { year += year >= 50 ? 1900 : 2000 }
        let (month, day, hour, minute, second) = (take(2), take(2), take(2), take(2), take(2))
        guard (1...12).contains(month), (1...CivilCalendar.days(inMonth: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { throw DERError(.invalidContents, offset: offset) }
        return CivilCalendar.daysSinceEpoch(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60
            + second
    }

    private func requireTag(_ expected: DERTag) throws(DERError) {
        guard tag == expected else { throw DERError(.unexpectedTag, offset: offset) }
    }

    private func signedValue(tag expected: DERTag) throws(DERError) -> Int64 {
        try requireTag(expected)
        try UniversalRules.checkInteger(self)
        guard contents.count <= 8 else { throw DERError(.outOfRange, offset: offset) }
        // Sign-extend from the first octet.
        var value: Int64 = contents.first.map { Int64(Int8(bitPattern: $0)) } ?? 0
        for byte in contents.dropFirst() { value = value << 8 | Int64(byte) }
        return value
    }
}

/// The contents rules of X.690 §8 and §10–11 for the universal types this project meets.
enum UniversalRules {
    /// Universal types that DER encodes only in the primitive form: BOOLEAN, INTEGER, BIT STRING,
    /// OCTET STRING, NULL, OBJECT IDENTIFIER, ObjectDescriptor, REAL, ENUMERATED, the string and time
    /// types and RELATIVE-OID.
    private static let primitiveOnly = Set<UInt32>([1, 2, 3, 4, 5, 6, 7, 9, 10, 12, 13, 30] + Array(18...28))

    static func check(_ element: DERElement) throws(DERError) {
        guard element.tag.tagClass == .universal else { return }
        let number = element.tag.number
        if number == 16 || number == 17 {
            guard element.tag.isConstructed else { throw DERError(.wrongForm, offset: element.offset) }
            return
        }
        guard !primitiveOnly.contains(number) || !element.tag.isConstructed else {
            throw DERError(.wrongForm, offset: element.offset)
        }
        switch number {
        case 1: try checkBoolean(element)
        case 2, 10: try checkInteger(element)
        case 3: try checkBitString(element)
        case 5: guard element.contents.isEmpty else { throw DERError(.invalidContents, offset: element.offset) }
        case 6: try checkObjectIdentifier(element)
        default: break
        }
    }

    /// X.690 §11.1: one octet, 0x00 or 0xff.
    static func checkBoolean(_ element: DERElement) throws(DERError) {
        guard element.contents.count == 1, element.contents.first == 0 || element.contents.first == 0xff else {
            throw DERError(.invalidContents, offset: element.offset)
        }
    }

    /// X.690 §8.3.2: at least one octet, and the first nine bits not all equal.
    static func checkInteger(_ element: DERElement) throws(DERError) {
        let contents = element.contents
        guard let first = contents.first else { throw DERError(.invalidContents, offset: element.offset) }
        if contents.count > 1 {
            let second = contents[contents.startIndex + 1]
            guard !(first == 0 && second < 0x80), !(first == 0xff && second >= 0x80) else {
                throw DERError(.invalidContents, offset: element.offset)
            }
        }
    }

    /// X.690 §8.6.2 and §11.2: an unused-bits octet 0–7 (0 when empty) and those bits zero.
    static func checkBitString(_ element: DERElement) throws(DERError) {
        let contents = element.contents
        guard let unused = contents.first, unused < 8, contents.count > 1 || unused == 0, let last = contents.last
        else { throw DERError(.invalidContents, offset: element.offset) }
        let unusedBitsMask: UInt8 = (1 << unused) - 1
        guard contents.count == 1 || last & unusedBitsMask == 0 else {
            throw DERError(.invalidContents, offset: element.offset)
        }
    }

    /// X.690 §8.19.2: every subidentifier minimal (no leading 0x80) and the last one complete.
    static func checkObjectIdentifier(_ element: DERElement) throws(DERError) {
        var startsArc = true
        for byte in element.contents {
            guard !(startsArc && byte == 0x80) else { throw DERError(.invalidContents, offset: element.offset) }
            startsArc = byte & 0x80 == 0
        }
        guard startsArc, !element.contents.isEmpty else { throw DERError(.invalidContents, offset: element.offset) }
    }
}

/// Proleptic Gregorian dates to days since 1970-01-01.
enum CivilCalendar {
    static func days(inMonth month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// The days-from-civil algorithm (eras of 400 years starting in March).
    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = shiftedYear / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// One element: its identifier, and slices of the input for the whole encoding and the contents.
/// Slice indices are positions in the array the input came from, so offsets stay comparable.
public struct DERElement: Sendable, Equatable {
    public let tag: DERTag
    /// Identifier, length and contents octets exactly as read (e.g. the signed `tbsCertificate`).
    public let encoded: ArraySlice<UInt8>
    /// The contents octets.
    public let contents: ArraySlice<UInt8>

    /// Where the element starts in the input.
    public var offset: Int { encoded.startIndex }
}

/// Strict DER (X.690 §10) over whole inputs: exactly one element, definite lengths in their shortest
/// form, minimal tags (high tag numbers included), no trailing bytes, bounded depth and size, and the
/// contents rules of the universal types. Used for App Attest's certificate nonce and Android Key
/// Attestation (certificates, KeyDescription); the parser never interprets what it cannot check.
public enum DER {
    /// Parses `bytes` as exactly one element and checks every element nested inside it (constructed
    /// elements recursively) before anything is interpreted.
    public static func parse(_ bytes: ArraySlice<UInt8>, limits: DERLimits) throws(DERError) -> DERElement {
        guard bytes.count <= limits.maximumByteCount else { throw DERError(.tooLarge, offset: bytes.startIndex) }
        var reader = DERReader(bytes)
        let element = try reader.next()
        try reader.finish()
        try validate(element, depth: 1, limits: limits)
        return element
    }

    public static func parse(_ bytes: [UInt8], limits: DERLimits) throws(DERError) -> DERElement {
        try parse(bytes[...], limits: limits)
    }

    private static func validate(_ element: DERElement, depth: Int, limits: DERLimits) throws(DERError) {
        guard depth <= limits.maximumDepth else { throw DERError(.tooDeep, offset: element.offset) }
        try UniversalRules.check(element)
        guard element.tag.isConstructed else { return }
        var children = DERReader(element.contents)
        while !children.isAtEnd {
            try validate(try children.next(), depth: depth + 1, limits: limits)
        }
    }
}

/// Reads consecutive elements from the contents of one constructed element (or a whole input).
/// Every header is checked as it is read; contents are checked by ``DER/parse(_:limits:)`` and by
/// the typed accessors of ``DERElement``.
public struct DERReader: Sendable {
    private let bytes: ArraySlice<UInt8>
    private var position: Int

    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    public var isAtEnd: Bool { position == bytes.endIndex }

    /// The next element; throws `.truncated` at the end.
    public mutating func next() throws(DERError) -> DERElement {
        let element = try Self.element(in: bytes, at: position)
        position = element.encoded.endIndex
        return element
    }

    /// The next element, which must have `tag`.
    public mutating func read(_ tag: DERTag) throws(DERError) -> DERElement {
        guard try peekTag() == tag else { throw DERError(.unexpectedTag, offset: position) }
        return try next()
    }

    /// The next element when it has `tag`; nothing is consumed otherwise (OPTIONAL components).
    public mutating func readIfPresent(_ tag: DERTag) throws(DERError) -> DERElement? {
        guard try peekTag() == tag else { return nil }
        return try next()
    }

    /// The tag of the next element, `nil` at the end.
    public func peekTag() throws(DERError) -> DERTag? {
        guard !isAtEnd else { return nil }
        return try Self.identifier(in: bytes, at: position).tag
    }

    /// Throws `.trailingBytes` unless every element has been read.
    public func finish() throws(DERError) {
        guard isAtEnd else { throw DERError(.trailingBytes, offset: position) }
    }

    private static func element(in bytes: ArraySlice<UInt8>, at start: Int) throws(DERError) -> DERElement {
        let (tag, afterIdentifier) = try identifier(in: bytes, at: start)
        guard afterIdentifier < bytes.endIndex else { throw DERError(.truncated, offset: afterIdentifier) }
        let first = bytes[afterIdentifier]
        var contentsStart = afterIdentifier + 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            guard first != 0x80 else { throw DERError(.indefiniteLength, offset: afterIdentifier) }
            let width = Int(first & 0x7f)
            // Four octets cover 4 GiB, far beyond any limit; 0xff is reserved (X.690 §8.1.3.5).
            guard width <= 4 else { throw DERError(.nonMinimalLength, offset: afterIdentifier) }
            guard bytes.endIndex - contentsStart >= width else { throw DERError(.truncated, offset: contentsStart) }
            for byte in bytes[contentsStart..<contentsStart + width] { length = length << 8 | Int(byte) }
            // Shortest form: the long form only from 128, and no leading zero octet.
            guard length >= 0x80, bytes[contentsStart] != 0 else {
                throw DERError(.nonMinimalLength, offset: afterIdentifier)
            }
            contentsStart += width
        }
        guard bytes.endIndex - contentsStart >= length else { throw DERError(.truncated, offset: contentsStart) }
        let end = contentsStart + length
        return DERElement(tag: tag, encoded: bytes[start..<end], contents: bytes[contentsStart..<end])
    }

    /// The identifier at `start` and the position after it.
    private static func identifier(
        in bytes: ArraySlice<UInt8>, at start: Int
    ) throws(DERError) -> (
        tag: DERTag, end: Int
    ) {
        guard start < bytes.endIndex else { throw DERError(.truncated, offset: start) }
        let first = bytes[start]
        let tagClass = DERTagClass(identifierOctet: first)
        let isConstructed = first & 0x20 != 0
        guard first & 0x1f == 0x1f else {
            // UNIVERSAL 0 is end-of-contents in either form (X.690 §8.1.5), never a DER element.
            guard first & 0xdf != 0 else { throw DERError(.unsupportedTag, offset: start) }
            return (DERTag(tagClass, number: UInt32(first & 0x1f), isConstructed: isConstructed), start + 1)
        }
        // High-tag-number form (X.690 §8.1.2.4): base-128 digits, most significant first.
        var number: UInt32 = 0
        var position = start + 1
        while true {
            guard position < bytes.endIndex else { throw DERError(.truncated, offset: position) }
            let digit = bytes[position]
            guard position > start + 1 || digit != 0x80 else { throw DERError(.nonMinimalTag, offset: start) }
            guard position - start <= 4 else { throw DERError(.unsupportedTag, offset: start) }
            number = number << 7 | UInt32(digit & 0x7f)
            position += 1
            if digit & 0x80 == 0 { break }
        }
        guard number >= 31 else { throw DERError(.nonMinimalTag, offset: start) }
        return (DERTag(tagClass, number: number, isConstructed: isConstructed), position)
    }
}

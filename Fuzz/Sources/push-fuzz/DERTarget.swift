import PushDER
import PushKeyAttestation

/// Strict DER under the certificate limits, and the Key Attestation parsers built on it (a whole
/// certificate, a KeyDescription extension value).
enum DERTarget {
    static func run(_ input: [UInt8]) {
        let element = try? DER.parse(input, limits: .certificate)
        if input.count > DERLimits.certificate.maximumByteCount {
            FuzzCheck.require(element == nil, "input over the byte limit parsed")
        }
        if let element {
            FuzzCheck.require(element.encoded.elementsEqual(input), "the element does not span the input")
            // DER has one encoding per value: rebuilding every header in its shortest form gives the input back.
            FuzzCheck.require(CanonicalDER.encode(element) == input, "a non-canonical encoding was accepted")
            CanonicalDER.readEveryValue(element)
        }
        if let certificate = try? AttestationCertificate(derEncoded: input) {
            FuzzCheck.require(element != nil, "a certificate parsed that the strict reader refuses")
            if let value = certificate.extensionValue(oid: KeyDescription.extensionOID) {
                _ = try? KeyDescription(extensionValue: value)
            }
        }
        if let description = try? KeyDescription(extensionValue: input[...]) {
            FuzzCheck.require(element != nil, "a KeyDescription parsed that the strict reader refuses")
            _ = description.attestationApplicationIDs
        }
    }
}

/// An encoder written apart from the reader: identifiers and lengths in their shortest form.
enum CanonicalDER {
    static func encode(_ element: DERElement) -> [UInt8] {
        var contents = Array(element.contents)
        if element.tag.isConstructed {
            var reader = DERReader(element.contents)
            contents = []
            while !reader.isAtEnd {
                guard let child = try? reader.next() else {
                    FuzzCheck.require(false, "an accepted element's children do not read")
                    return []
                }
                contents += encode(child)
            }
        }
        return identifier(element.tag) + length(contents.count) + contents
    }

    static func identifier(_ tag: DERTag) -> [UInt8] {
        let leading = tag.tagClass.rawValue << 6 | (tag.isConstructed ? 0x20 : 0)
        guard tag.number >= 31 else { return [leading | UInt8(tag.number)] }
        var digits = [UInt8(tag.number & 0x7f)]
        var rest = tag.number >> 7
        while rest > 0 {
            digits.insert(UInt8(rest & 0x7f) | 0x80, at: 0)
            rest >>= 7
        }
        return [leading | 0x1f] + digits
    }

    static func length(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var octets: [UInt8] = []
        var rest = count
        while rest > 0 {
            octets.insert(UInt8(rest & 0xff), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(octets.count)] + octets
    }

    /// Every typed read on every element: none may trap, whatever the tag.
    static func readEveryValue(_ element: DERElement) {
        _ = try? element.boolean()
        _ = try? element.integer()
        _ = try? element.enumerated()
        _ = try? element.integerBytes()
        _ = try? element.octetString()
        _ = try? element.null()
        _ = try? element.bitStringOctets()
        _ = try? element.objectIdentifier()
        _ = try? element.time()
        guard element.tag.isConstructed else { return }
        var reader = DERReader(element.contents)
        while !reader.isAtEnd, let child = try? reader.next() { readEveryValue(child) }
    }
}

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

/// Re-encoding with PushDER's writer, ``DERValue``, which shares no code with the reader.
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
        let identifier = DERValue.identifier(element.tag)
        return DERValue.element(identifier: identifier, contents: contents)
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

import PushCrypto
import PushDER

/// One certificate of a Key Attestation chain, parsed as strict DER X.509 v3 (RFC 5280 §4.1,
/// docs/protocol.md §5a step 1) with PushDER rather than OpenSSL, so that the bytes checked for
/// signatures, validity and extensions are exactly the bytes the strict reader accepted.
public struct AttestationCertificate: Sendable, Equatable {
    public let derEncoded: [UInt8]
    /// The serial number as the status list keys it: lowercase hex without leading zeros.
    public let serialNumberHex: String
    /// Validity, in Unix seconds, both ends inclusive.
    public let notBefore: Int64
    public let notAfter: Int64
    public let subjectPublicKeyInfoDER: [UInt8]
    /// Whether the subject name has a `serialNumber` attribute (2.5.4.5): the mark of a
    /// factory-provisioned batch certificate (docs/protocol.md §5a step 2).
    public let subjectHasSerialNumber: Bool
    /// The DER `tbsCertificate`: what the issuer signed.
    let signedPortion: ArraySlice<UInt8>
    /// `nil` when the certificate uses an algorithm outside ``X509SignatureAlgorithm``, or parameters
    /// its identifier does not allow: such a certificate parses, but verifies under no key.
    let signatureAlgorithm: X509SignatureAlgorithm?
    let signature: [UInt8]
    private let extensions: [(oid: String, value: ArraySlice<UInt8>)]

    public init(derEncoded: [UInt8]) throws(DERError) {
        let certificate = try DER.parse(derEncoded, limits: .certificate)
        var outer = try certificate.reader(expecting: .sequence)
        let tbs = try outer.read(.sequence)
        let outerAlgorithm = try outer.read(.sequence)
        let signature = try outer.read(.bitString).bitStringOctets()
        try outer.finish()

        var fields = try tbs.reader(expecting: .sequence)
        var version = try fields.read(.contextSpecific(0)).reader(expecting: .contextSpecific(0))
        let versionNumber = try version.read(.integer)
        guard try versionNumber.integer() == 2 else { throw DERError(.invalidContents, offset: versionNumber.offset) }
        try version.finish()
        let serial = try fields.read(.integer).integerBytes()
        let innerAlgorithm = try fields.read(.sequence)
        // RFC 5280 §4.1.1.2: the signed and the outer algorithm identifiers are the same.
        guard innerAlgorithm.encoded.elementsEqual(outerAlgorithm.encoded) else {
            throw DERError(.invalidContents, offset: outerAlgorithm.offset)
        }
        _ = try fields.read(.sequence)  // issuer
        var validity = try fields.read(.sequence).reader(expecting: .sequence)
        notBefore = try validity.next().time()
        notAfter = try validity.next().time()
        try validity.finish()
        subjectHasSerialNumber = try Self.attributeTypes(inName: fields.read(.sequence)).contains(
            Self.serialNumberAttribute)
        subjectPublicKeyInfoDER = Array(try fields.read(.sequence).encoded)
        _ = try fields.readIfPresent(.contextSpecific(1, isConstructed: false))  // issuerUniqueID
        _ = try fields.readIfPresent(.contextSpecific(2, isConstructed: false))  // subjectUniqueID
        extensions = try fields.readIfPresent(.contextSpecific(3)).map(Self.extensions(in:)) ?? []
        try fields.finish()

        self.derEncoded = derEncoded
        serialNumberHex = SerialNumber.hex(twosComplement: serial)
        signedPortion = tbs.encoded
        signatureAlgorithm = try Self.algorithm(outerAlgorithm)
        self.signature = Array(signature)
    }

    /// The `extnValue` contents of extension `oid`, `nil` when absent (a second instance is a
    /// format error at parse time, RFC 5280 §4.2).
    public func extensionValue(oid: String) -> ArraySlice<UInt8>? {
        extensions.first { $0.oid == oid }?.value
    }

    /// Whether `key` verifies this certificate's signature.
    func isSigned(by key: X509PublicKey) -> Bool {
        guard let signatureAlgorithm else { return false }
        return key.isValidSignature(signature, for: Array(signedPortion), algorithm: signatureAlgorithm)
    }

    /// `id-at-serialNumber` (X.520).
    static let serialNumberAttribute = "2.5.4.5"

    /// The attribute types of a `Name`: `SEQUENCE OF SET SIZE (1..MAX) OF SEQUENCE { type OBJECT
    /// IDENTIFIER, value ANY }` (RFC 5280 §4.1.2.4); the values are not interpreted.
    private static func attributeTypes(inName name: DERElement) throws(DERError) -> [String] {
        var relativeNames = try name.reader(expecting: .sequence)
        var types: [String] = []
        while !relativeNames.isAtEnd {
            var attributes = try relativeNames.read(.set).reader(expecting: .set)
            repeat {
                var attribute = try attributes.read(.sequence).reader(expecting: .sequence)
                types.append(try attribute.read(.objectIdentifier).objectIdentifier())
                _ = try attribute.next()
                try attribute.finish()
            } while !attributes.isAtEnd
        }
        return types
    }

    /// `[3] EXPLICIT SEQUENCE SIZE (1..MAX) OF Extension`, each `SEQUENCE { extnID, critical
    /// BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }`; criticality is not evaluated.
    private static func extensions(in wrapper: DERElement) throws(DERError) -> [(oid: String, value: ArraySlice<UInt8>)]
    {
        var explicit = try wrapper.reader(expecting: .contextSpecific(3))
        let list = try explicit.read(.sequence)
        try explicit.finish()
        var entries = try list.reader(expecting: .sequence)
        var extensions: [(oid: String, value: ArraySlice<UInt8>)] = []
        repeat {
            let entry = try entries.next()
            var parts = try entry.reader(expecting: .sequence)
            let oid = try parts.read(.objectIdentifier).objectIdentifier()
            _ = try parts.readIfPresent(.boolean)?.boolean()
            let value = try parts.read(.octetString).octetString()
            try parts.finish()
            guard !extensions.contains(where: { $0.oid == oid }) else {
                throw DERError(.invalidContents, offset: entry.offset)
            }
            extensions.append((oid, value))
        } while !entries.isAtEnd
        return extensions
    }

    /// The signature algorithm, when it is one of the six and its parameters are as its RFC says.
    private static func algorithm(_ identifier: DERElement) throws(DERError) -> X509SignatureAlgorithm? {
        var parts = try identifier.reader(expecting: .sequence)
        let oid = try parts.read(.objectIdentifier).objectIdentifier()
        let parameters = parts.isAtEnd ? nil : try parts.next()
        try parts.finish()
        guard let algorithm = X509SignatureAlgorithm(objectIdentifier: oid) else { return nil }
        guard let parameters else { return algorithm }
        return algorithm.allowsNullParameters && parameters.tag == .null ? algorithm : nil
    }

    public static func == (lhs: AttestationCertificate, rhs: AttestationCertificate) -> Bool {
        lhs.derEncoded == rhs.derEncoded
    }
}

/// Serial numbers as text: lowercase hex of the value without leading zeros (`-` before a negative
/// one's magnitude), the form of the status list's keys (docs/protocol.md §5a step 3).
enum SerialNumber {
    static func hex(twosComplement bytes: ArraySlice<UInt8>) -> String {
        guard let first = bytes.first, first >= 0x80 else { return trimmed(Hex.encode(bytes)) }
        // Negative: the magnitude is the two's complement of the bytes.
        var magnitude = bytes.map { ~$0 }
        for index in magnitude.indices.reversed() {
            magnitude[index] &+= 1
            if magnitude[index] != 0 { break }
        }
        return "-" + trimmed(Hex.encode(magnitude))
    }

    /// `text` (hex digits, any case, optionally after `-`) in the canonical form; `nil` if it is not hex.
    static func normalized(_ text: String) -> String? {
        let negative = text.hasPrefix("-")
        let digits = negative ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.utf8.allSatisfy(\.isASCIIHexDigit) else { return nil }
        let canonical = trimmed(digits.lowercased())
        return negative && canonical != "0" ? "-" + canonical : canonical
    }

    private static func trimmed(_ hex: String) -> String {
        let significant = hex.drop { $0 == "0" }
        return significant.isEmpty ? "0" : String(significant)
    }
}

extension UInt8 {
    fileprivate var isASCIIHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}

/// The few DER shapes an Android KeyDescription needs (X.690 §10: shortest definite lengths, minimal
/// integers, high tag numbers, SET OF sorted). The demo's own, so that it links nothing of the tests
/// for its Android half (docs/decisions/0741).
indirect enum DemoDER {
    case integer(Int64)
    case enumerated(Int64)
    case boolean(Bool)
    case null
    case octets([UInt8])
    case sequence([DemoDER])
    /// A SET OF: members sorted by their encodings (X.690 §11.6).
    case set([DemoDER])
    /// `[number] EXPLICIT`: a constructed context-specific element around one value.
    case explicit(UInt32, DemoDER)

    var encoded: [UInt8] {
        switch self {
        case .integer(let value): Self.element([0x02], Self.integerContents(value))
        case .enumerated(let value): Self.element([0x0a], Self.integerContents(value))
        case .boolean(let value): [0x01, 0x01, value ? 0xff : 0x00]
        case .null: [0x05, 0x00]
        case .octets(let bytes): Self.element([0x04], bytes)
        case .sequence(let members): Self.element([0x30], members.flatMap(\.encoded))
        case .set(let members):
            Self.element([0x31], members.map(\.encoded).sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 })
        case .explicit(let number, let value): Self.element(Self.contextIdentifier(number), value.encoded)
        }
    }

    private static func element(_ identifier: [UInt8], _ contents: [UInt8]) -> [UInt8] {
        identifier + length(contents.count) + contents
    }

    /// A constructed context-specific identifier, in the high-tag-number form from 31 (X.690 §8.1.2.4).
    private static func contextIdentifier(_ number: UInt32) -> [UInt8] {
        guard number >= 31 else { return [0xa0 | UInt8(number)] }
        var digits = [UInt8(number & 0x7f)]
        var rest = number >> 7
        while rest > 0 {
            digits.insert(UInt8(rest & 0x7f) | 0x80, at: 0)
            rest >>= 7
        }
        return [0xbf] + digits
    }

    private static func length(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var octets: [UInt8] = []
        var rest = count
        while rest > 0 {
            octets.insert(UInt8(rest & 0xff), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(octets.count)] + octets
    }

    /// Minimal two's complement, big-endian.
    private static func integerContents(_ value: Int64) -> [UInt8] {
        var octets = withUnsafeBytes(of: value.bigEndian, Array.init)
        while octets.count > 1, (octets[0] == 0 && octets[1] < 0x80) || (octets[0] == 0xff && octets[1] >= 0x80) {
            octets.removeFirst()
        }
        return octets
    }
}

/// The Key Attestation extension (OID 1.3.6.1.4.1.11129.2.1.17) a genuine phone puts on the leaf of
/// a freshly generated enrollment key: everything docs/protocol.md §5a steps 4–6 accept. KeyMint 300
/// in the TEE, a locked bootloader with verified boot, a generated P-256 signing key, and the app's
/// package and signing-certificate digest in `attestationApplicationId`.
struct DemoKeyDescription {
    static let extensionOID = "1.3.6.1.4.1.11129.2.1.17"

    /// SHA-256 of the enrollment transcript (docs/protocol.md §3).
    let challenge: [UInt8]
    let packageName: String
    let signingCertificateDigest: [UInt8]

    var encoded: [UInt8] {
        let trustedEnvironment: Int64 = 1
        return DemoDER.sequence([
            .integer(300), .enumerated(trustedEnvironment), .integer(300), .enumerated(trustedEnvironment),
            .octets(challenge), .octets([]), Self.list(softwareEnforced), Self.list(hardwareEnforced),
        ]).encoded
    }

    /// `creationDateTime` and `attestationApplicationId`, in ascending tag order.
    private var softwareEnforced: [(UInt32, DemoDER)] {
        let application = DemoDER.sequence([
            .set([.sequence([.octets(Array(packageName.utf8)), .integer(1)])]),
            .set([.octets(signingCertificateDigest)]),
        ])
        return [(701, .integer(1_767_225_600_000)), (709, .octets(application.encoded))]
    }

    /// purpose SIGN, algorithm EC, keySize 256, ecCurve P_256, noAuthRequired, origin GENERATED,
    /// rootOfTrust (locked, Verified), osVersion and osPatchLevel, in ascending tag order.
    private var hardwareEnforced: [(UInt32, DemoDER)] {
        let rootOfTrust = DemoDER.sequence([
            .octets([UInt8](repeating: 0x5a, count: 32)), .boolean(true), .enumerated(0),
            .octets([UInt8](repeating: 0xa5, count: 32)),
        ])
        return [
            (1, .set([.integer(2)])), (2, .integer(3)), (3, .integer(256)), (10, .integer(1)), (503, .null),
            (702, .integer(0)), (704, rootOfTrust), (705, .integer(160_000)), (706, .integer(202_601)),
        ]
    }

    private static func list(_ fields: [(UInt32, DemoDER)]) -> DemoDER {
        .sequence(fields.map { DemoDER.explicit($0.0, $0.1) })
    }
}

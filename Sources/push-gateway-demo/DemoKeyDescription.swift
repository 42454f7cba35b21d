import PushDER

/// The Key Attestation extension (OID 1.3.6.1.4.1.11129.2.1.17) a genuine phone puts on the leaf of
/// a freshly generated enrollment key: everything docs/protocol.md §5a steps 4–6 accept. KeyMint 300
/// in the TEE, a locked bootloader with verified boot, a generated P-256 signing key, and the app's
/// package and signing-certificate digest in `attestationApplicationId`. The demo's own, not the
/// test-support library's `SyntheticKeyDescription`, so that its Android half links nothing of the
/// tests (docs/decisions/0741); PushDER's writer encodes it (0780).
struct DemoKeyDescription {
    static let extensionOID = "1.3.6.1.4.1.11129.2.1.17"

    /// SHA-256 of the enrollment transcript (docs/protocol.md §3).
    let challenge: [UInt8]
    let packageName: String
    let signingCertificateDigest: [UInt8]

    var encoded: [UInt8] {
        let trustedEnvironment: Int64 = 1
        return DERValue.sequence([
            .integer(300), .enumerated(trustedEnvironment), .integer(300), .enumerated(trustedEnvironment),
            .octets(challenge), .octets([]), Self.list(softwareEnforced), Self.list(hardwareEnforced),
        ]).encoded
    }

    /// `creationDateTime` and `attestationApplicationId`, in ascending tag order.
    private var softwareEnforced: [(UInt32, DERValue)] {
        let application = DERValue.sequence([
            .set([.sequence([.octets(Array(packageName.utf8)), .integer(1)])]),
            .set([.octets(signingCertificateDigest)]),
        ])
        return [(701, .integer(1_767_225_600_000)), (709, .octets(application.encoded))]
    }

    /// purpose SIGN, algorithm EC, keySize 256, ecCurve P_256, noAuthRequired, origin GENERATED,
    /// rootOfTrust (locked, Verified), osVersion and osPatchLevel, in ascending tag order.
    private var hardwareEnforced: [(UInt32, DERValue)] {
        let rootOfTrust = DERValue.sequence([
            .octets([UInt8](repeating: 0x5a, count: 32)), .boolean(true), .enumerated(0),
            .octets([UInt8](repeating: 0xa5, count: 32)),
        ])
        return [
            (1, .set([.integer(2)])), (2, .integer(3)), (3, .integer(256)), (10, .integer(1)), (503, .null),
            (702, .integer(0)), (704, rootOfTrust), (705, .integer(160_000)), (706, .integer(202_601)),
        ]
    }

    private static func list(_ fields: [(UInt32, DERValue)]) -> DERValue {
        .sequence(fields.map { DERValue.explicit($0.0, $0.1) })
    }
}

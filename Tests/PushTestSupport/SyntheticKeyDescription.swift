import PushCrypto
import PushDER

/// An Android KeyDescription (the Key Attestation extension) with every property a test may break,
/// encoded by ``DERValue``. The defaults describe what docs/protocol.md §5a accepts: a P-256 signing
/// key generated in the TEE of a locked, verified device, for `packageName` signed by `signatureDigests`.
public struct SyntheticKeyDescription: Sendable {
    /// Where `attestationApplicationId` (tag 709) goes.
    public enum Placement: Sendable {
        case softwareEnforced
        case hardwareEnforced
        case both
        case absent
    }

    public var attestationVersion: Int64 = 300
    public var attestationSecurityLevel: Int64 = 1
    public var keyMintVersion: Int64 = 300
    public var keyMintSecurityLevel: Int64 = 1
    public var challenge: [UInt8]
    public var uniqueID: [UInt8] = []
    /// Hardware-enforced `purpose`, `algorithm`, `keySize`, `ecCurve`, `origin`; `nil` leaves one out.
    public var purposes: [Int64]? = [2]
    public var algorithm: Int64? = 3
    public var keySize: Int64? = 256
    public var ecCurve: Int64? = 1
    public var origin: Int64? = 0
    /// `nil` leaves `rootOfTrust` out.
    public var deviceLocked: Bool? = true
    public var verifiedBootState: Int64 = 0
    /// `rootOfTrust.verifiedBootKey`: the 32-byte digest of the key that verified the OS.
    public var verifiedBootKey = [UInt8](repeating: 0x5a, count: 32)
    public var packages: [(name: String, version: Int64)]
    public var signatureDigests: [[UInt8]]
    public var applicationIDPlacement = Placement.softwareEnforced
    /// `softwareEnforced` as a whole, replacing the built one (e.g. to break its order).
    public var softwareEnforcedOverride: DERValue?

    public init(challenge: [UInt8], packageName: String, signatureDigests: [[UInt8]]) {
        self.challenge = challenge
        packages = [(packageName, 1)]
        self.signatureDigests = signatureDigests
    }

    /// The hardware-enforced list as tagged fields, in ascending tag order.
    public var hardwareEnforcedFields: [(UInt32, DERValue)] {
        var fields: [(UInt32, DERValue)] = []
        if let purposes { fields.append((1, .set(purposes.map(DERValue.integer)))) }
        if let algorithm { fields.append((2, .integer(algorithm))) }
        if let keySize { fields.append((3, .integer(keySize))) }
        if let ecCurve { fields.append((10, .integer(ecCurve))) }
        fields.append((503, .null))  // noAuthRequired
        if let origin { fields.append((702, .integer(origin))) }
        if let deviceLocked {
            let rootOfTrust = DERValue.sequence([
                .octets(verifiedBootKey), .boolean(deviceLocked), .enumerated(verifiedBootState),
                .octets([UInt8](repeating: 0xa5, count: 32)),
            ])
            fields.append((704, rootOfTrust))
        }
        fields.append((705, .integer(160_000)))  // osVersion
        fields.append((706, .integer(202_511)))  // osPatchLevel
        if [.hardwareEnforced, .both].contains(applicationIDPlacement) { fields.append((709, applicationID)) }
        return fields
    }

    /// The software-enforced list as tagged fields, in ascending tag order.
    public var softwareEnforcedFields: [(UInt32, DERValue)] {
        var fields: [(UInt32, DERValue)] = [(701, .integer(1_758_900_646_327))]  // creationDateTime
        if [.softwareEnforced, .both].contains(applicationIDPlacement) { fields.append((709, applicationID)) }
        return fields
    }

    /// `attestationApplicationId`: an OCTET STRING holding the DER of the packages and digests.
    public var applicationID: DERValue {
        let packageInfos = packages.map { DERValue.sequence([.octets(Array($0.name.utf8)), .integer($0.version)]) }
        return .octets(
            DERValue.sequence([.set(packageInfos), .set(signatureDigests.map(DERValue.octets))]).encoded)
    }

    /// The extension value.
    public var encoded: [UInt8] {
        DERValue.sequence([
            .integer(attestationVersion), .enumerated(attestationSecurityLevel), .integer(keyMintVersion),
            .enumerated(keyMintSecurityLevel), .octets(challenge), .octets(uniqueID),
            softwareEnforcedOverride ?? Self.list(softwareEnforcedFields), Self.list(hardwareEnforcedFields),
        ]).encoded
    }

    /// An AuthorizationList of `fields`, in the order given.
    public static func list(_ fields: [(UInt32, DERValue)]) -> DERValue {
        .sequence(fields.map { DERValue.explicit($0.0, $0.1) })
    }
}

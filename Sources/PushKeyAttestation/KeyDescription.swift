import PushDER
import PushSystem

/// The Key Attestation extension of a leaf certificate (Android's `KeyDescription` schema), parsed
/// as strict DER (docs/protocol.md §5a step 4). The fields the §5a rules read are decoded and
/// checked here; every other authorization is kept as its DER element, uninterpreted.
public struct KeyDescription: Sendable, Equatable {
    /// `1.3.6.1.4.1.11129.2.1.17`.
    public static let extensionOID = "1.3.6.1.4.1.11129.2.1.17"

    public let attestationVersion: Int64
    public let attestationSecurityLevel: SecurityLevel
    /// `keymasterVersion` before KeyMint.
    public let keyMintVersion: Int64
    /// `keymasterSecurityLevel` before KeyMint.
    public let keyMintSecurityLevel: SecurityLevel
    public let attestationChallenge: [UInt8]
    public let uniqueID: [UInt8]
    public let softwareEnforced: AuthorizationList
    public let hardwareEnforced: AuthorizationList

    /// `SEQUENCE { attestationVersion INTEGER, attestationSecurityLevel SecurityLevel, keyMintVersion
    /// INTEGER, keyMintSecurityLevel SecurityLevel, attestationChallenge OCTET STRING, uniqueId OCTET
    /// STRING, softwareEnforced AuthorizationList, hardwareEnforced AuthorizationList }`.
    public init(extensionValue: ArraySlice<UInt8>) throws(DERError) {
        var fields = try DER.parse(extensionValue, limits: .extensionValue).reader(expecting: .sequence)
        attestationVersion = try fields.read(.integer).integer()
        attestationSecurityLevel = try SecurityLevel(fields.read(.enumerated))
        keyMintVersion = try fields.read(.integer).integer()
        keyMintSecurityLevel = try SecurityLevel(fields.read(.enumerated))
        attestationChallenge = Array(try fields.read(.octetString).octetString())
        uniqueID = Array(try fields.read(.octetString).octetString())
        softwareEnforced = try AuthorizationList(fields.read(.sequence))
        hardwareEnforced = try AuthorizationList(fields.read(.sequence))
        try fields.finish()
    }

    /// The `attestationApplicationId` copies (tag 709, in either list; docs/protocol.md §5a step 6),
    /// software-enforced first (where Android puts it).
    public var attestationApplicationIDs: [AttestationApplicationID] {
        [softwareEnforced.attestationApplicationID, hardwareEnforced.attestationApplicationID].compactMap { $0 }
    }
}

/// `SecurityLevel ::= ENUMERATED { Software (0), TrustedEnvironment (1), StrongBox (2) }`.
public enum SecurityLevel: Int64, Sendable, NamedLevel {
    case software = 0
    case trustedEnvironment = 1
    case strongBox = 2

    /// The names of docs/protocol.md §12 (`--min-security-level`, the CLI's output).
    public var name: String {
        switch self {
        case .software: "software"
        case .trustedEnvironment: "tee"
        case .strongBox: "strongbox"
        }
    }

    /// An unknown value is a malformed extension, not a level.
    init(_ element: DERElement) throws(DERError) {
        guard let level = SecurityLevel(rawValue: try element.enumerated()) else {
            throw DERError(.outOfRange, offset: element.offset)
        }
        self = level
    }
}

/// One `AuthorizationList`: a SEQUENCE of `[tag] EXPLICIT` fields, all optional, in ascending tag
/// order with no tag twice.
public struct AuthorizationList: Sendable, Equatable {
    /// The tags docs/protocol.md §5a reads.
    public enum Tag {
        public static let purpose: UInt32 = 1
        public static let algorithm: UInt32 = 2
        public static let ecCurve: UInt32 = 10
        public static let origin: UInt32 = 702
        public static let rootOfTrust: UInt32 = 704
        public static let attestationApplicationID: UInt32 = 709
    }

    /// The values docs/protocol.md §5a compares with.
    public enum Value {
        public static let purposeSign: Int64 = 2
        public static let algorithmEC: Int64 = 3
        public static let curveP256: Int64 = 1
        public static let originGenerated: Int64 = 0
    }

    public struct Entry: Sendable, Equatable {
        public let tag: UInt32
        /// The one element inside the explicit tag.
        public let value: DERElement
    }

    public let entries: [Entry]
    /// `purpose [1] EXPLICIT SET OF INTEGER`.
    public let purposes: [Int64]?
    /// `algorithm [2] EXPLICIT INTEGER`.
    public let algorithm: Int64?
    /// `ecCurve [10] EXPLICIT INTEGER`.
    public let ecCurve: Int64?
    /// `origin [702] EXPLICIT INTEGER`.
    public let origin: Int64?
    public let rootOfTrust: RootOfTrust?
    public let attestationApplicationID: AttestationApplicationID?

    init(_ list: DERElement) throws(DERError) {
        var fields = try list.reader(expecting: .sequence)
        var entries: [Entry] = []
        while !fields.isAtEnd {
            let wrapper = try fields.next()
            guard wrapper.tag.tagClass == .contextSpecific, wrapper.tag.isConstructed,
                entries.last.map({ $0.tag < wrapper.tag.number }) ?? true
            else { throw DERError(.unexpectedTag, offset: wrapper.offset) }
            var explicit = DERReader(wrapper.contents)
            entries.append(Entry(tag: wrapper.tag.number, value: try explicit.next()))
            try explicit.finish()
        }
        self.entries = entries
        func value(_ tag: UInt32) -> DERElement? { entries.first { $0.tag == tag }?.value }
        purposes = try value(Tag.purpose).map(Self.integerSet)
        algorithm = try value(Tag.algorithm)?.integer()
        ecCurve = try value(Tag.ecCurve)?.integer()
        origin = try value(Tag.origin)?.integer()
        rootOfTrust = try value(Tag.rootOfTrust).map(RootOfTrust.init)
        attestationApplicationID = try value(Tag.attestationApplicationID).map(AttestationApplicationID.init)
    }

    /// The element of field `tag`, `nil` when the list does not have it.
    public func value(tag: UInt32) -> DERElement? {
        entries.first { $0.tag == tag }?.value
    }

    static func integerSet(_ element: DERElement) throws(DERError) -> [Int64] {
        var members = try element.reader(expecting: .set)
        var values: [Int64] = []
        while !members.isAtEnd { values.append(try members.read(.integer).integer()) }
        return values
    }
}

/// `RootOfTrust ::= SEQUENCE { verifiedBootKey OCTET STRING, deviceLocked BOOLEAN, verifiedBootState
/// VerifiedBootState, verifiedBootHash OCTET STRING }` (the hash since attestation version 3).
public struct RootOfTrust: Sendable, Equatable {
    public let verifiedBootKey: [UInt8]
    public let deviceLocked: Bool
    public let verifiedBootState: VerifiedBootState
    public let verifiedBootHash: [UInt8]?

    init(_ element: DERElement) throws(DERError) {
        var fields = try element.reader(expecting: .sequence)
        verifiedBootKey = Array(try fields.read(.octetString).octetString())
        deviceLocked = try fields.read(.boolean).boolean()
        let state = try fields.read(.enumerated)
        guard let verifiedBootState = VerifiedBootState(rawValue: try state.enumerated()) else {
            throw DERError(.outOfRange, offset: state.offset)
        }
        self.verifiedBootState = verifiedBootState
        verifiedBootHash = try fields.readIfPresent(.octetString).map { element throws(DERError) in
            Array(try element.octetString())
        }
        try fields.finish()
    }
}

/// `VerifiedBootState ::= ENUMERATED { Verified (0), SelfSigned (1), Unverified (2), Failed (3) }`.
public enum VerifiedBootState: Int64, Sendable, CaseIterable {
    case verified = 0
    case selfSigned = 1
    case unverified = 2
    case failed = 3

    /// The name `verify-android-attestation` prints.
    public var name: String {
        switch self {
        case .verified: "verified"
        case .selfSigned: "self_signed"
        case .unverified: "unverified"
        case .failed: "failed"
        }
    }
}

/// `attestationApplicationId [709] EXPLICIT OCTET STRING` whose contents are the DER of
/// `SEQUENCE { package_infos SET OF SEQUENCE { package_name OCTET STRING, version INTEGER },
/// signature_digests SET OF OCTET STRING }`.
public struct AttestationApplicationID: Sendable, Equatable {
    public struct Package: Sendable, Equatable {
        /// The name's bytes as the device wrote them (compared byte for byte).
        public let name: [UInt8]
        public let version: Int64
    }

    public let packages: [Package]
    /// SHA-256 digests of the app's signing certificates.
    public let signatureDigests: [[UInt8]]

    init(_ element: DERElement) throws(DERError) {
        let encoded = try element.octetString()
        var fields = try DER.parse(encoded, limits: .extensionValue).reader(expecting: .sequence)
        var packageInfos = try fields.read(.set).reader(expecting: .set)
        var packages: [Package] = []
        while !packageInfos.isAtEnd {
            var info = try packageInfos.read(.sequence).reader(expecting: .sequence)
            let name = Array(try info.read(.octetString).octetString())
            packages.append(Package(name: name, version: try info.read(.integer).integer()))
            try info.finish()
        }
        var digests = try fields.read(.set).reader(expecting: .set)
        var signatureDigests: [[UInt8]] = []
        while !digests.isAtEnd { signatureDigests.append(Array(try digests.read(.octetString).octetString())) }
        try fields.finish()
        self.packages = packages
        self.signatureDigests = signatureDigests
    }
}

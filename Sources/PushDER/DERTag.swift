/// The class bits of an identifier octet (X.690 §8.1.2.2).
public enum DERTagClass: UInt8, Sendable {
    case universal = 0
    case application = 1
    case contextSpecific = 2
    case `private` = 3

    /// The class in the top two bits of an identifier octet.
    init(identifierOctet: UInt8) {
        switch identifierOctet >> 6 {
        case 0: self = .universal
        case 1: self = .application
        case 2: self = .contextSpecific
        default: self = .private
        }
    }
}

/// An identifier: class, primitive or constructed form, and tag number (X.690 §8.1.2). Numbers from
/// 31 up use the high-tag-number form, e.g. Android's `[709] EXPLICIT` (`bf 85 45`).
public struct DERTag: Hashable, Sendable, CustomStringConvertible {
    public let tagClass: DERTagClass
    public let isConstructed: Bool
    public let number: UInt32

    public init(_ tagClass: DERTagClass, number: UInt32, isConstructed: Bool) {
        self.tagClass = tagClass
        self.number = number
        self.isConstructed = isConstructed
    }

    public static let boolean = universal(1)
    public static let integer = universal(2)
    public static let bitString = universal(3)
    public static let octetString = universal(4)
    public static let null = universal(5)
    public static let objectIdentifier = universal(6)
    public static let enumerated = universal(10)
    public static let utcTime = universal(23)
    public static let generalizedTime = universal(24)
    public static let sequence = DERTag(.universal, number: 16, isConstructed: true)
    public static let set = DERTag(.universal, number: 17, isConstructed: true)

    /// A context-specific tag, constructed by default (the form of every `[n] EXPLICIT`).
    public static func contextSpecific(_ number: UInt32, isConstructed: Bool = true) -> DERTag {
        DERTag(.contextSpecific, number: number, isConstructed: isConstructed)
    }

    private static func universal(_ number: UInt32) -> DERTag {
        DERTag(.universal, number: number, isConstructed: false)
    }

    public var description: String {
        let form = isConstructed ? "constructed" : "primitive"
        switch tagClass {
        case .universal: return "UNIVERSAL \(number) \(form)"
        case .application: return "[APPLICATION \(number)] \(form)"
        case .contextSpecific: return "[\(number)] \(form)"
        case .private: return "[PRIVATE \(number)] \(form)"
        }
    }
}

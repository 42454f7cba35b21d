public import PushErrors

/// Why DER input was refused, with the byte offset (from the start of the parsed input) where it
/// was noticed. Never carries input bytes.
public struct DERError: Error, Sendable, Equatable {
    /// Why (docs/decisions/0540): new checks add a code without breaking a caller's `switch`, which
    /// ends in `default`.
    public typealias Code = ErrorCode<DERError>

    public let code: Code
    public let offset: Int

    public init(_ code: Code, offset: Int) {
        self.code = code
        self.offset = offset
    }
}

/// Bounds on what ``DER/parse(_:limits:)`` accepts; every length in the input is hostile.
public struct DERLimits: Sendable, Equatable {
    public let maximumByteCount: Int
    /// The top-level element has depth 1; each enclosing constructed element adds 1.
    public let maximumDepth: Int

    /// Certificates: docs/protocol.md §1 caps an attestation certificate at 8192 bytes. An X.509
    /// certificate nests about 8 deep (a KeyDescription's `rootOfTrust` sits at depth 6 inside its
    /// extension value), so 32 leaves room without allowing a recursion bomb.
    public static let certificate = DERLimits(maximumByteCount: 8192, maximumDepth: 32)
    /// One certificate extension value, parsed on its own.
    public static let extensionValue = DERLimits(maximumByteCount: 8192, maximumDepth: 32)
}

extension ErrorCode<DERError> {
    /// The input ended inside an element, or a length runs past its enclosing element.
    public static var truncated: Self { Self("truncated") }

    /// Length octet 0x80 (BER's indefinite form; X.690 §10.1 forbids it in DER).
    public static var indefiniteLength: Self { Self("indefiniteLength") }

    /// A length not in its shortest form (X.690 §10.1), or longer than four octets.
    public static var nonMinimalLength: Self { Self("nonMinimalLength") }

    /// A high-tag-number identifier that is not minimal: a number below 31, or a leading 0x80.
    public static var nonMinimalTag: Self { Self("nonMinimalTag") }

    /// A tag number that needs more than four subsequent octets, or UNIVERSAL 0 (end-of-contents).
    public static var unsupportedTag: Self { Self("unsupportedTag") }

    /// Bytes after the element that should have been the last.
    public static var trailingBytes: Self { Self("trailingBytes") }

    /// Nesting deeper than ``DERLimits/maximumDepth``.
    public static var tooDeep: Self { Self("tooDeep") }

    /// Input longer than ``DERLimits/maximumByteCount``.
    public static var tooLarge: Self { Self("tooLarge") }

    /// A universal type in the wrong form: a constructed string or a primitive SEQUENCE/SET
    /// (X.690 §10.2 makes every string primitive in DER).
    public static var wrongForm: Self { Self("wrongForm") }

    /// Contents that break their type's DER rules: a BOOLEAN that is not 0x00 or 0xff, an
    /// INTEGER that is empty or not minimal, a non-empty NULL, a BIT STRING with bad padding, an
    /// OBJECT IDENTIFIER with a non-minimal arc, a time that is not `…Z` with seconds.
    public static var invalidContents: Self { Self("invalidContents") }

    /// A schema read found another tag, or nothing, where it expected `expected`.
    public static var unexpectedTag: Self { Self("unexpectedTag") }

    /// A value that is well formed but does not fit the requested Swift type.
    public static var outOfRange: Self { Self("outOfRange") }
}

import PushCrypto

/// One synthetic App Attest key on one "device": builds attestation objects and signs assertions the
/// way iOS does (authenticator data layout of WebAuthn §6.1, docs/protocol.md §5).
public struct SyntheticAppAttestDevice: Sendable {
    /// `appattest` followed by seven zero bytes.
    public static let productionAAGUID = Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
    /// `appattestdevelop`.
    public static let developmentAAGUID = Array("appattestdevelop".utf8)

    public let authority: SyntheticAppAttestAuthority
    public let key: P256PrivateKey
    public let appID: String
    public let aaguid: [UInt8]

    /// SHA-256 of the uncompressed public key, as App Attest derives key ids.
    public var keyID: [UInt8] { SHA256.hash(key.publicKey.uncompressedPoint) }
    /// ``keyID`` in standard padded base64, as the app sends it.
    public var keyIDBase64: String { Base64.encode(keyID) }

    /// Deviations from a well-formed attestation, to reach each failure reason.
    public struct AttestationOptions: Sendable {
        public var rpIDHash: [UInt8]?
        public var counter: UInt32 = 0
        public var aaguid: [UInt8]?
        public var credentialID: [UInt8]?
        /// Replaces the certified nonce (instead of SHA-256(authData ‖ clientDataHash)).
        public var certifiedNonce: [UInt8]?
        /// Replaces the whole nonce extension value; `.some(nil)` omits the extension.
        public var nonceExtension: [UInt8]??
        public var leafNotBefore: Int64?
        public var leafNotAfter: Int64?
        /// Replaces `x5c` (leaf first).
        public var certificates: [[UInt8]]?
        public var format = "apple-appattest"
        /// Extra top-level members appended after `authData`.
        public var extraMembers: [(SyntheticCBOR, SyntheticCBOR)] = []

        public init() {}
    }

    /// The authenticator data of an attestation: rpIdHash, flags (AT), counter, AAGUID, credential id
    /// length and id, then the credential public key as a COSE EC2 map (RFC 9053 §7.1.1).
    public func attestationAuthenticatorData(options: AttestationOptions = AttestationOptions()) -> [UInt8] {
        let credentialID = options.credentialID ?? keyID
        let point = key.publicKey.uncompressedPoint
        let coseKey = SyntheticCBOR.map([
            (.unsigned(1), .unsigned(2)), (.unsigned(3), .negative(6)), (.negative(0), .unsigned(1)),
            (.negative(1), .bytes(Array(point[1..<33]))), (.negative(2), .bytes(Array(point[33..<65]))),
        ])
        return (options.rpIDHash ?? SHA256.hash(Array(appID.utf8))) + [0x40]
            + SyntheticCBOR.bigEndian(UInt64(options.counter), width: 4) + (options.aaguid ?? aaguid)
            + SyntheticCBOR.bigEndian(UInt64(credentialID.count), width: 2) + credentialID + coseKey.encoded
    }

    /// An attestation object (CBOR) for `clientDataHash`.
    public func attestationObject(
        clientDataHash: [UInt8], options: AttestationOptions = AttestationOptions()
    ) throws -> [UInt8] {
        let authenticatorData = attestationAuthenticatorData(options: options)
        let nonce = options.certifiedNonce ?? SHA256.hash(authenticatorData + clientDataHash)
        let nonceExtension = options.nonceExtension ?? SyntheticAppAttestAuthority.nonceExtensionValue(nonce: nonce)
        let certificates =
            try options.certificates ?? [
                authority.issueLeaf(
                    for: key.publicKey, nonceExtension: nonceExtension, notBefore: options.leafNotBefore,
                    notAfter: options.leafNotAfter
                ).derEncoded,
                authority.intermediate.derEncoded,
            ]
        let object = SyntheticCBOR.map(
            [
                (.text("fmt"), .text(options.format)),
                (
                    .text("attStmt"),
                    .map([
                        (.text("x5c"), .array(certificates.map { .bytes($0) })),
                        (.text("receipt"), .bytes(Array("synthetic receipt".utf8))),
                    ])
                ),
                (.text("authData"), .bytes(authenticatorData)),
            ] + options.extraMembers)
        return object.encoded
    }

    /// The authenticator data of an assertion: rpIdHash, flags, counter, then `extensions` (the
    /// encoded extensions map, which sets the ED flag 0x80) when given. `forceExtensionFlag` sets
    /// ED even without extension bytes, `trailingBytes` appends bytes without setting it.
    public func assertionAuthenticatorData(
        counter: UInt32, extensions: [UInt8]? = nil, forceExtensionFlag: Bool = false, trailingBytes: [UInt8] = []
    ) -> [UInt8] {
        let flags: UInt8 = extensions != nil || forceExtensionFlag ? 0x80 : 0x00
        return SHA256.hash(Array(appID.utf8)) + [flags] + SyntheticCBOR.bigEndian(UInt64(counter), width: 4)
            + (extensions ?? []) + trailingBytes
    }

    /// An assertion (CBOR `{signature, authenticatorData}`) over `authenticatorData` and
    /// `clientDataHash`, signed as iOS does: DER ECDSA-P256-SHA256 of SHA-256(authenticatorData ‖ clientDataHash).
    public func assertion(clientDataHash: [UInt8], authenticatorData: [UInt8]) throws -> [UInt8] {
        let signature = try key.derSignature(for: SHA256.hash(authenticatorData + clientDataHash))
        return SyntheticCBOR.map([
            (.text("signature"), .bytes(signature)), (.text("authenticatorData"), .bytes(authenticatorData)),
        ]).encoded
    }

    /// A well-formed assertion with `counter` and optional `extensions` (encoded CBOR map).
    public func assertion(clientDataHash: [UInt8], counter: UInt32, extensions: [UInt8]? = nil) throws -> [UInt8] {
        try assertion(
            clientDataHash: clientDataHash,
            authenticatorData: assertionAuthenticatorData(counter: counter, extensions: extensions))
    }
}

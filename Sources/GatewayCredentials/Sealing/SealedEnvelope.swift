import PushCrypto

/// The sealed envelope of docs/protocol.md §7, shared by endpoint grants and token custody:
/// `<key id>.<base64url-no-pad(nonce12 ‖ ciphertext ‖ tag16)>`, AES-256-GCM with AAD
/// `<purpose prefix>` ‖ key id, so an envelope cannot be moved to another purpose or relabelled with
/// another key id. The first key seals; every key opens (decrypt-only predecessors for rotation).
public struct SealedEnvelope: Sendable {
    /// What the envelope protects; each purpose has its own AAD prefix and its own keyring.
    public enum Purpose: Sendable {
        case endpointGrant
        case tokenCustody

        var additionalDataPrefix: [UInt8] {
            switch self {
            case .endpointGrant: Array("push-gateway grant v1:".utf8)
            case .tokenCustody: Array("push-gateway token v1:".utf8)
            }
        }
    }

    public let purpose: Purpose
    private let keyring: Keyring

    public init(purpose: Purpose, keyring: Keyring) {
        self.purpose = purpose
        self.keyring = keyring
    }

    /// Seals `plaintext` under the current (first) key with a fresh random nonce.
    public func seal(_ plaintext: [UInt8]) throws(CredentialsError) -> String {
        let key = keyring.sealingKey
        do {
            let nonce = try SecureRandom.bytes(AES256GCM.nonceByteCount)
            let box = try AES256GCM.seal(
                key: key.bytes, nonce: nonce, plaintext: plaintext,
                additionalData: purpose.additionalDataPrefix + Array(key.id.utf8))
            return key.id + "." + Base64.encodeURLNoPadding(nonce + box.ciphertext + box.tag)
        } catch {
            throw CredentialsError(.sealingFailed)
        }
    }

    /// Opens an envelope; nil for an unknown key id, bad encoding, or any tampering.
    public func open(_ envelope: String) -> [UInt8]? {
        // `<key id>.<base64url>` with exactly one dot; found by index rather than by splitting into
        // an array of parts (this runs twice per delivery). A second dot would be in the base64url
        // part, whose alphabet has none, so decoding refuses it.
        let text = envelope.utf8
        guard let dot = text.firstIndex(of: UInt8(ascii: ".")), let key = keyring.key(id: Substring(text[..<dot])),
            let sealed = Base64.decodeURLNoPadding(Substring(text[text.index(after: dot)...])),
            sealed.count >= AES256GCM.nonceByteCount + AES256GCM.tagByteCount
        else { return nil }
        return try? AES256GCM.open(
            nonceCiphertextTag: sealed, key: key.bytes,
            additionalData: purpose.additionalDataPrefix + Array(key.id.utf8))
    }
}

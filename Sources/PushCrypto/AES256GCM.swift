internal import COpenSSL
import Synchronization

/// AES-256-GCM (NIST SP 800-38D) with a 12-byte nonce and a 16-byte tag, as docs/protocol.md §7 seals.
public enum AES256GCM {
    public static let keyByteCount = 32
    public static let nonceByteCount = 12
    public static let tagByteCount = 16

    /// Ciphertext (same length as the plaintext) and authentication tag.
    public struct SealedBox: Sendable, Equatable {
        public let ciphertext: [UInt8]
        public let tag: [UInt8]

        public init(ciphertext: [UInt8], tag: [UInt8]) {
            self.ciphertext = ciphertext
            self.tag = tag
        }
    }

    /// Encrypts and authenticates `plaintext`, also authenticating `additionalData`.
    /// The caller supplies a unique nonce per key (e.g. 12 bytes from ``SecureRandom``).
    public static func seal(
        key: [UInt8], nonce: [UInt8], plaintext: [UInt8], additionalData: [UInt8]
    ) throws(CryptoError) -> SealedBox {
        guard key.count == keyByteCount else { throw CryptoError(.invalidKey) }
        guard nonce.count == nonceByteCount, plaintext.count < Int32.max, additionalData.count < Int32.max else {
            throw CryptoError(.invalidInput)
        }
        let sealed = try CipherContext.sealAEAD(
            FetchedAlgorithms.shared.aes256GCM, key: key, nonce: nonce, plaintext: plaintext,
            additionalData: additionalData, tagByteCount: tagByteCount)
        return SealedBox(ciphertext: sealed.ciphertext, tag: sealed.tag)
    }

    /// Verifies the tag and decrypts; throws `.authenticationFailed` for any tampering.
    public static func open(
        _ box: SealedBox, key: [UInt8], nonce: [UInt8], additionalData: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        guard key.count == keyByteCount else { throw CryptoError(.invalidKey) }
        guard nonce.count == nonceByteCount, box.tag.count == tagByteCount else {
            throw CryptoError(.authenticationFailed)
        }
        return try nonce.withUnsafeBufferPointer { nonce throws(CryptoError) in
            try box.ciphertext.withUnsafeBufferPointer { ciphertext throws(CryptoError) in
                try box.tag.withUnsafeBufferPointer { tag throws(CryptoError) in
                    try open(nonce: nonce, ciphertext: ciphertext, tag: tag, key: key, additionalData: additionalData)
                }
            }
        }
    }

    /// `open` of `nonce ‖ ciphertext ‖ tag` in one buffer (the sealed envelope of docs/protocol.md §7),
    /// read in place instead of split into arrays.
    public static func open(
        nonceCiphertextTag sealed: [UInt8], key: [UInt8], additionalData: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        guard key.count == keyByteCount else { throw CryptoError(.invalidKey) }
        guard sealed.count >= nonceByteCount + tagByteCount else { throw CryptoError(.authenticationFailed) }
        return try sealed.withUnsafeBufferPointer { buffer throws(CryptoError) in
            let tagStart = buffer.count - tagByteCount
            return try open(
                nonce: UnsafeBufferPointer(rebasing: buffer[..<nonceByteCount]),
                ciphertext: UnsafeBufferPointer(rebasing: buffer[nonceByteCount..<tagStart]),
                tag: UnsafeBufferPointer(rebasing: buffer[tagStart...]), key: key, additionalData: additionalData)
        }
    }

    private static func open(
        nonce: UnsafeBufferPointer<UInt8>, ciphertext: UnsafeBufferPointer<UInt8>, tag: UnsafeBufferPointer<UInt8>,
        key: [UInt8], additionalData: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        guard ciphertext.count < Int32.max, additionalData.count < Int32.max else {
            throw CryptoError(.authenticationFailed)
        }
        let context = try DecryptionContexts.shared.take(key: key, nonce: nonce.baseAddress)
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        var produced: Int32 = 0
        // OpenSSL copies the expected tag; it never writes through the pointer.
        guard context.authenticate(additionalData, encrypting: false),
            ciphertext.isEmpty
                || EVP_DecryptUpdate(
                    context.pointer, &plaintext, &produced, ciphertext.baseAddress, Int32(ciphertext.count)) == 1,
            EVP_CIPHER_CTX_ctrl(
                context.pointer, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount),
                UnsafeMutableRawPointer(mutating: tag.baseAddress)) == 1
        else { throw CryptoError.capturing(.operationFailed) }
        var tail = [UInt8](repeating: 0, count: 16)
        var tailLength: Int32 = 0
        let authentic = EVP_DecryptFinal_ex(context.pointer, &tail, &tailLength) == 1
        // Finished either way: the next init sets a new key and nonce (a failed tag check included).
        DecryptionContexts.shared.giveBack(context)
        guard authentic else {
            OpenSSLErrorQueue.clear()
            throw CryptoError(.authenticationFailed)
        }
        return plaintext
    }
}

/// AES-256-GCM decryption contexts kept for reuse (docs/decisions/0320). A new context allocates
/// OpenSSL's provider state for the cipher on its first init; a spare keeps it, and
/// `EVP_DecryptInit_ex(context, NULL, NULL, key, nonce)` only sets the key and the nonce again
/// (EVP_EncryptInit(3)), which also clears what a finished or failed open left. Two opens per
/// delivery (grant and token) each skip the context's allocation, the provider's and their frees.
final class DecryptionContexts: Sendable {
    static let shared = DecryptionContexts()

    /// Contexts given back beyond this many (more callers at once) are freed.
    static let maximumSpareCount = 8

    private let spares = Mutex<[CipherContext]>([])

    /// How many contexts wait for reuse (tests).
    var spareCount: Int { spares.withLock { $0.count } }

    /// A context set to decrypt with `key` and `nonce`, owned by the caller until it gives it back.
    func take(key: [UInt8], nonce: UnsafePointer<UInt8>?) throws(CryptoError) -> CipherContext {
        if let spare = spares.withLock({ $0.popLast() }) {
            guard EVP_DecryptInit_ex(spare.pointer, nil, nil, key, nonce) == 1 else {
                throw CryptoError.capturing(.operationFailed)
            }
            return spare
        }
        let context = try CipherContext()
        guard EVP_DecryptInit_ex(context.pointer, FetchedAlgorithms.shared.aes256GCM, nil, key, nonce) == 1 else {
            throw CryptoError.capturing(.operationFailed)
        }
        return context
    }

    /// Keeps a context whose open ran to its tag check; one that failed earlier is not given back.
    func giveBack(_ context: CipherContext) {
        spares.withLock { spares in
            if spares.count < Self.maximumSpareCount { spares.append(context) }
        }
    }
}

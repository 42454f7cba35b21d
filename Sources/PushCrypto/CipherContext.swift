internal import COpenSSL

/// Owned `EVP_CIPHER_CTX`.
///
/// `@unchecked Sendable`: a context is used by one caller at a time; `DecryptionContexts` hands each
/// spare to one caller under its lock.
final class CipherContext: @unchecked Sendable {
    let pointer: OpaquePointer

    init() throws(CryptoError) {
        guard let pointer = EVP_CIPHER_CTX_new() else { throw CryptoError.capturing(.operationFailed) }
        self.pointer = pointer
    }

    deinit { EVP_CIPHER_CTX_free(pointer) }

    /// Seals with an AEAD cipher of a 12-byte nonce (AES-256-GCM, ChaCha20-Poly1305): the ciphertext,
    /// as long as `plaintext`, and the tag. The callers have checked every size.
    static func sealAEAD(
        _ cipher: OpaquePointer, key: [UInt8], nonce: [UInt8], plaintext: [UInt8], additionalData: [UInt8],
        tagByteCount: Int
    ) throws(CryptoError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        let context = try CipherContext()
        guard EVP_EncryptInit_ex(context.pointer, cipher, nil, key, nonce) == 1,
            context.authenticate(additionalData, encrypting: true)
        else { throw CryptoError.capturing(.operationFailed) }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var produced: Int32 = 0
        if !plaintext.isEmpty {
            guard EVP_EncryptUpdate(context.pointer, &ciphertext, &produced, plaintext, Int32(plaintext.count)) == 1
            else { throw CryptoError.capturing(.operationFailed) }
        }
        var tail = [UInt8](repeating: 0, count: 16)
        var tailLength: Int32 = 0
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        guard EVP_EncryptFinal_ex(context.pointer, &tail, &tailLength) == 1, tailLength == 0,
            EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_AEAD_GET_TAG, Int32(tagByteCount), &tag) == 1
        else { throw CryptoError.capturing(.operationFailed) }
        return (ciphertext, tag)
    }

    /// Opens `ciphertext ‖ tag` with an AEAD cipher of a 12-byte nonce (ChaCha20-Poly1305,
    /// AES-128-GCM); throws `.authenticationFailed` for any tampering. The callers have checked every
    /// size; `sealed` holds at least the tag.
    static func openAEAD(
        _ cipher: OpaquePointer, key: [UInt8], nonce: [UInt8], sealed: [UInt8], additionalData: [UInt8],
        tagByteCount: Int
    ) throws(CryptoError) -> [UInt8] {
        let ciphertextCount = sealed.count - tagByteCount
        let context = try CipherContext()
        guard EVP_DecryptInit_ex(context.pointer, cipher, nil, key, nonce) == 1,
            context.authenticate(additionalData, encrypting: false)
        else { throw CryptoError.capturing(.operationFailed) }
        var plaintext = [UInt8](repeating: 0, count: ciphertextCount)
        let updated = sealed.withUnsafeBufferPointer { buffer -> Bool in
            var produced: Int32 = 0
            // OpenSSL copies the expected tag; it never writes through the pointer.
            let tag = UnsafeMutableRawPointer(mutating: buffer.baseAddress! + ciphertextCount)
            return
                (ciphertextCount == 0
                || EVP_DecryptUpdate(
                    context.pointer, &plaintext, &produced, buffer.baseAddress, Int32(ciphertextCount)) == 1)
                && EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_AEAD_SET_TAG, Int32(tagByteCount), tag) == 1
        }
        guard updated else { throw CryptoError.capturing(.operationFailed) }
        var tail = [UInt8](repeating: 0, count: 16)
        var tailLength: Int32 = 0
        guard EVP_DecryptFinal_ex(context.pointer, &tail, &tailLength) == 1 else {
            OpenSSLErrorQueue.clear()
            throw CryptoError(.authenticationFailed)
        }
        return plaintext
    }

    /// Feeds `additionalData` to an AEAD cipher as data it authenticates without encrypting.
    func authenticate(_ additionalData: [UInt8], encrypting: Bool) -> Bool {
        guard !additionalData.isEmpty else { return true }
        var ignored: Int32 = 0
        let count = Int32(additionalData.count)
        return encrypting
            ? EVP_EncryptUpdate(pointer, nil, &ignored, additionalData, count) == 1
            : EVP_DecryptUpdate(pointer, nil, &ignored, additionalData, count) == 1
    }
}

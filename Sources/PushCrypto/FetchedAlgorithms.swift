internal import COpenSSL

/// Algorithm implementations fetched once from OpenSSL's default provider.
///
/// OpenSSL 3 looks a legacy `EVP_sha256()` / `EVP_aes_256_gcm()` object up in its provider store
/// (name map, method cache, locks) on every `EVP_DigestInit_ex` / `EVP_CipherInit_ex`; passing an
/// explicitly fetched object skips that lookup (OpenSSL's migration guide, "Fetching algorithms").
///
/// `@unchecked Sendable` is safe because the pointers are never changed or freed after `init` (the
/// objects live as long as the process) and OpenSSL documents fetched `EVP_MD` / `EVP_CIPHER`
/// objects as usable by many threads at once (openssl-threads(7)).
final class FetchedAlgorithms: @unchecked Sendable {
    static let shared = FetchedAlgorithms()

    /// SHA-256 (`EVP_MD`).
    let sha256: OpaquePointer
    /// SHA-1 (`EVP_MD`), for the WebSocket handshake only.
    let sha1: OpaquePointer
    /// AES-256-GCM (`EVP_CIPHER`).
    let aes256GCM: OpaquePointer
    /// AES-128-GCM (`EVP_CIPHER`), for Web Push's `aes128gcm` content coding.
    let aes128GCM: OpaquePointer
    /// ChaCha20 with a 16-byte IV: 32-bit little-endian block counter ‖ 96-bit nonce (`EVP_CIPHER`).
    let chaCha20: OpaquePointer
    /// ChaCha20-Poly1305 (RFC 8439 §2.8) with a 12-byte nonce (`EVP_CIPHER`).
    let chaCha20Poly1305: OpaquePointer
    /// HKDF (RFC 5869) (`EVP_KDF`).
    let hkdf: OpaquePointer

    private init() {
        // Fetching a built-in algorithm of the default provider fails only when memory is exhausted
        // or the OpenSSL installation is broken; nothing cryptographic can run then.
        guard let sha256 = EVP_MD_fetch(nil, "SHA256", nil) else { fatalError("EVP_MD_fetch(SHA256) failed") }
        guard let aes256GCM = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil) else {
            fatalError("EVP_CIPHER_fetch(AES-256-GCM) failed")
        }
        guard let aes128GCM = EVP_CIPHER_fetch(nil, "AES-128-GCM", nil) else {
            fatalError("EVP_CIPHER_fetch(AES-128-GCM) failed")
        }
        guard let sha1 = EVP_MD_fetch(nil, "SHA1", nil) else { fatalError("EVP_MD_fetch(SHA1) failed") }
        guard let chaCha20 = EVP_CIPHER_fetch(nil, "ChaCha20", nil) else {
            fatalError("EVP_CIPHER_fetch(ChaCha20) failed")
        }
        guard let chaCha20Poly1305 = EVP_CIPHER_fetch(nil, "ChaCha20-Poly1305", nil) else {
            fatalError("EVP_CIPHER_fetch(ChaCha20-Poly1305) failed")
        }
        guard let hkdf = EVP_KDF_fetch(nil, "HKDF", nil) else { fatalError("EVP_KDF_fetch(HKDF) failed") }
        self.sha256 = sha256
        self.sha1 = sha1
        self.aes256GCM = aes256GCM
        self.aes128GCM = aes128GCM
        self.chaCha20 = chaCha20
        self.chaCha20Poly1305 = chaCha20Poly1305
        self.hkdf = hkdf
    }

    deinit {
        EVP_MD_free(sha256)
        EVP_MD_free(sha1)
        EVP_CIPHER_free(aes256GCM)
        EVP_CIPHER_free(aes128GCM)
        EVP_CIPHER_free(chaCha20)
        EVP_CIPHER_free(chaCha20Poly1305)
        EVP_KDF_free(hkdf)
    }
}

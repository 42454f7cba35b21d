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
    /// AES-256-GCM (`EVP_CIPHER`).
    let aes256GCM: OpaquePointer

    private init() {
        // Fetching a built-in algorithm of the default provider fails only when memory is exhausted
        // or the OpenSSL installation is broken; nothing cryptographic can run then.
        guard let sha256 = EVP_MD_fetch(nil, "SHA256", nil) else { fatalError("EVP_MD_fetch(SHA256) failed") }
        guard let aes256GCM = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil) else {
            fatalError("EVP_CIPHER_fetch(AES-256-GCM) failed")
        }
        self.sha256 = sha256
        self.aes256GCM = aes256GCM
    }

    deinit {
        EVP_MD_free(sha256)
        EVP_CIPHER_free(aes256GCM)
    }
}

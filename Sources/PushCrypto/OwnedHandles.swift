internal import COpenSSL

/// Owned `EVP_PKEY`.
final class OwnedKey {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    /// Parses a DER SubjectPublicKeyInfo of any key type; trailing bytes are refused.
    convenience init(subjectPublicKeyInfoDER der: [UInt8]) throws(CryptoError) {
        guard der.count < Int32.max else { throw CryptoError(.invalidKey) }
        let parsed = DEREncoding.decodeWhole(der, { d2i_PUBKEY(nil, $0, $1) }, free: { EVP_PKEY_free($0) })
        guard let parsed else { throw CryptoError.capturing(.invalidKey) }
        self.init(parsed)
    }

    /// Parses a DER private key of any type (PKCS#8 or the type's own structure).
    convenience init(privateKeyDER der: [UInt8]) throws(CryptoError) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw CryptoError.capturing(.invalidKey) }
        self.init(parsed)
    }

    /// A P-256 key from its parts through `EVP_PKEY_fromdata`, which refuses a point off the curve:
    /// the 65-byte uncompressed point alone, or with the 32-byte big-endian private scalar. OpenSSL
    /// 3's DER decoders try every registered format and cost several times more
    /// (docs/performance.md "Web Push provider").
    convenience init(p256Point point: [UInt8], scalar: [UInt8]? = nil) throws(CryptoError) {
        guard point.count == 65, point[0] == 0x04, scalar.map({ $0.count == 32 }) ?? true,
            let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil)
        else { throw CryptoError(.invalidKey) }
        defer { EVP_PKEY_CTX_free(context) }
        // An OSSL_PARAM keeps pointers to its name and value, and EVP_PKEY_fromdata reads them: each
        // lives in an array whose scope spans that call (docs/reliability.md, "C pointer lifetimes").
        // An integer parameter is native-endian.
        var groupParameter = Array("group".utf8CString)
        var pointParameter = Array("pub".utf8CString)
        var scalarParameter = Array("priv".utf8CString)
        var groupName = Array("prime256v1".utf8CString)
        var pointBytes = point
        #if _endian(little)
            var scalarBytes = Array((scalar ?? []).reversed())
        #else
            var scalarBytes = scalar ?? []
        #endif
        defer { scalarBytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        var selection = OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS
        selection |= OSSL_KEYMGMT_SELECT_PUBLIC_KEY | (scalar == nil ? 0 : OSSL_KEYMGMT_SELECT_PRIVATE_KEY)
        var key: OpaquePointer?
        let status = groupParameter.withUnsafeMutableBufferPointer { group in
            pointParameter.withUnsafeMutableBufferPointer { pub in
                scalarParameter.withUnsafeMutableBufferPointer { priv in
                    groupName.withUnsafeMutableBufferPointer { groupName in
                        pointBytes.withUnsafeMutableBytes { pointBytes in
                            scalarBytes.withUnsafeMutableBytes { scalarBytes in
                                var parameters = [
                                    OSSL_PARAM_construct_utf8_string(group.baseAddress, groupName.baseAddress, 0),
                                    OSSL_PARAM_construct_octet_string(
                                        pub.baseAddress, pointBytes.baseAddress, pointBytes.count),
                                ]
                                if scalar != nil {
                                    parameters.append(
                                        OSSL_PARAM_construct_BN(
                                            priv.baseAddress,
                                            scalarBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                            scalarBytes.count))
                                }
                                parameters.append(OSSL_PARAM_construct_end())
                                guard EVP_PKEY_fromdata_init(context) == 1 else { return Int32(0) }
                                return EVP_PKEY_fromdata(context, &key, Int32(selection), &parameters)
                            }
                        }
                    }
                }
            }
        }
        guard status == 1, let key else { throw CryptoError.capturing(.invalidKey) }
        self.init(key)
    }

    /// The 32-byte big-endian private scalar of an EC key.
    func privateScalar() throws(CryptoError) -> [UInt8] {
        var bignum: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pointer, "priv", &bignum) == 1, let bignum else {
            throw CryptoError.capturing(.invalidKey)
        }
        defer { BN_clear_free(bignum) }
        var scalar = [UInt8](repeating: 0, count: 32)
        guard BN_bn2binpad(bignum, &scalar, 32) == 32 else { throw CryptoError.capturing(.invalidKey) }
        return scalar
    }

    deinit { EVP_PKEY_free(pointer) }

    /// Signs `message` hashed with `digest` under the key's own scheme (ECDSA gives a DER
    /// `Ecdsa-Sig-Value`, RSA a PKCS#1 v1.5 block, OpenSSL's default RSA padding).
    func sign(_ message: [UInt8], digest: OpaquePointer?) throws(CryptoError) -> [UInt8] {
        let context = try DigestContext()
        guard EVP_DigestSignInit(context.pointer, nil, digest, nil, pointer) == 1 else {
            throw CryptoError.capturing(.operationFailed)
        }
        var length = 0
        guard EVP_DigestSign(context.pointer, nil, &length, message, message.count) == 1, length > 0 else {
            throw CryptoError.capturing(.operationFailed)
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context.pointer, &signature, &length, message, message.count) == 1 else {
            throw CryptoError.capturing(.operationFailed)
        }
        return Array(signature.prefix(length))
    }

    /// The key agreement of this private key with `peer`'s public key (ECDH: the shared x coordinate).
    func derive(with peer: OwnedKey) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_PKEY_CTX_new(pointer, nil) else { throw CryptoError.capturing(.operationFailed) }
        defer { EVP_PKEY_CTX_free(context) }
        var length = 0
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer.pointer) == 1,
            EVP_PKEY_derive(context, nil, &length) == 1, length > 0
        else { throw CryptoError.capturing(.operationFailed) }
        var secret = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_derive(context, &secret, &length) == 1 else { throw CryptoError.capturing(.operationFailed) }
        return Array(secret.prefix(length))
    }

    /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), unencrypted.
    func pkcs8PEM() throws(CryptoError) -> String {
        let bio = try OwnedMemoryBIO()
        guard PEM_write_bio_PKCS8PrivateKey(bio.pointer, pointer, nil, nil, 0, nil, nil) == 1 else {
            throw CryptoError.capturing(.operationFailed)
        }
        return String(decoding: bio.contents(), as: UTF8.self)
    }

    /// Reads an unencrypted PEM private key (PKCS#8 or the type's own structure).
    convenience init(privateKeyPEM pem: String) throws(CryptoError) {
        let bio = try OwnedMemoryBIO(copying: Array(pem.utf8))
        guard let pointer = PEM_read_bio_PrivateKey(bio.pointer, nil, nil, nil) else {
            throw CryptoError.capturing(.invalidKey)
        }
        self.init(pointer)
    }

    /// Whether `signature` verifies over `message` hashed with `digest` (the key's own scheme:
    /// ECDSA with a DER `Ecdsa-Sig-Value`, or RSA PKCS#1 v1.5, OpenSSL's default RSA padding).
    func verifies(_ signature: [UInt8], for message: [UInt8], digest: OpaquePointer?) -> Bool {
        guard !signature.isEmpty, let context = try? DigestContext() else { return false }
        defer { OpenSSLErrorQueue.clear() }
        guard EVP_DigestVerifyInit(context.pointer, nil, digest, nil, pointer) == 1 else { return false }
        return EVP_DigestVerify(context.pointer, signature, signature.count, message, message.count) == 1
    }
}

/// Owned `X509`.
final class OwnedCertificate {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { X509_free(pointer) }
}

/// Owned memory `BIO`.
final class OwnedMemoryBIO {
    let pointer: OpaquePointer

    /// A memory BIO holding a copy of `bytes` (`BIO_write` copies; `BIO_new_mem_buf` would
    /// only borrow them).
    init(copying bytes: [UInt8]) throws(CryptoError) {
        guard let pointer = BIO_new(BIO_s_mem()) else { throw CryptoError.capturing(.operationFailed) }
        self.pointer = pointer
        guard bytes.count < Int32.max else { throw CryptoError(.invalidInput) }
        if !bytes.isEmpty {
            guard BIO_write(pointer, bytes, Int32(bytes.count)) == Int32(bytes.count) else {
                throw CryptoError.capturing(.operationFailed)
            }
        }
    }

    /// An empty memory BIO to write into.
    init() throws(CryptoError) {
        guard let pointer = BIO_new(BIO_s_mem()) else { throw CryptoError.capturing(.operationFailed) }
        self.pointer = pointer
    }

    /// Everything written so far.
    func contents() -> [UInt8] {
        var data: UnsafeMutablePointer<CChar>? = nil
        let length = COpenSSL_BIO_get_mem_data(pointer, &data)
        guard length > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    deinit { BIO_free(pointer) }
}

/// DER encoders of OpenSSL's `i2d_*` shape: call once for the length, once to write.
enum DEREncoding {
    static func encode(
        _ encoder: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32
    ) throws(CryptoError)
        -> [UInt8]
    {
        let length = encoder(nil)
        guard length > 0 else { throw CryptoError.capturing(.operationFailed) }
        var output = [UInt8](repeating: 0, count: Int(length))
        let written = output.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return encoder(&cursor)
        }
        guard written == length else { throw CryptoError.capturing(.operationFailed) }
        return output
    }

    /// Runs an OpenSSL `d2i_…` decoder over all of `der`. Trailing bytes are refused: nil when it
    /// fails or stops before the end (what it built is then released with `free`).
    static func decodeWhole(
        _ der: [UInt8], _ decoder: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?,
        free: (OpaquePointer) -> Void
    ) -> OpaquePointer? {
        der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let object = decoder(&cursor, buffer.count) else { return nil }
            guard cursor == buffer.baseAddress.map({ $0 + buffer.count }) else {
                free(object)
                return nil
            }
            return object
        }
    }
}

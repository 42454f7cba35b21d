internal import COpenSSL

/// Verifies a certificate chain leaf → intermediates → one pinned root at a given time, with
/// OpenSSL's `X509_STORE_CTX` (RFC 5280 §6 path validation). The store holds only the pinned root:
/// no system trust store, no CRL fetching.
public enum X509ChainVerifier {
    /// Checks that `leaf` chains through exactly `intermediates` to `root` at `time` (Unix
    /// seconds); the built chain must have `intermediates.count + 2` certificates.
    public static func verify(
        leaf: X509Certificate, intermediates: [X509Certificate], root: X509Certificate, at time: Int64
    ) throws(CryptoError) {
        let outcome = evaluate(leaf: leaf, intermediates: intermediates, root: root, time: time, checkTime: true)
        switch outcome {
        case .valid:
            return
        case .rejected(let code, let reason):
            guard code == X509_V_ERR_CERT_HAS_EXPIRED || code == X509_V_ERR_CERT_NOT_YET_VALID else {
                throw CryptoError(.chainRejected, detail: reason)
            }
            // "time" only when the same chain is otherwise sound: verify again ignoring validity.
            let timeless = evaluate(leaf: leaf, intermediates: intermediates, root: root, time: time, checkTime: false)
            guard case .valid = timeless else {
                if case .rejected(_, let otherReason) = timeless {
                    throw CryptoError(.chainRejected, detail: otherReason)
                }
                throw CryptoError(.chainRejected, detail: reason)
            }
            throw CryptoError(.chainOutsideValidity)
        }
    }

    private enum Outcome {
        case valid
        case rejected(code: Int32, reason: String)
    }

    private static func evaluate(
        leaf: X509Certificate, intermediates: [X509Certificate], root: X509Certificate, time: Int64, checkTime: Bool
    ) -> Outcome {
        defer { OpenSSLErrorQueue.clear() }
        guard let leafHandle = try? X509Certificate.parse(leaf.derEncoded),
            let rootHandle = try? X509Certificate.parse(root.derEncoded)
        else { return .rejected(code: -1, reason: "unparsable certificate") }
        var intermediateHandles: [OwnedCertificate] = []
        for intermediate in intermediates {
            guard let handle = try? X509Certificate.parse(intermediate.derEncoded) else {
                return .rejected(code: -1, reason: "unparsable certificate")
            }
            intermediateHandles.append(handle)
        }
        guard let store = X509_STORE_new() else { return .rejected(code: -1, reason: "out of memory") }
        defer { X509_STORE_free(store) }
        guard X509_STORE_add_cert(store, rootHandle.pointer) == 1,
            let untrusted = COpenSSL_sk_X509_new_null()
        else { return .rejected(code: -1, reason: "out of memory") }
        // The stack does not own its elements; `intermediateHandles` keeps them alive.
        defer { COpenSSL_sk_X509_free(untrusted) }
        for handle in intermediateHandles where COpenSSL_sk_X509_push(untrusted, handle.pointer) <= 0 {
            return .rejected(code: -1, reason: "out of memory")
        }
        guard let context = X509_STORE_CTX_new() else { return .rejected(code: -1, reason: "out of memory") }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leafHandle.pointer, untrusted) == 1,
            let parameters = X509_STORE_CTX_get0_param(context)
        else { return .rejected(code: -1, reason: "context setup failed") }
        if checkTime {
            X509_VERIFY_PARAM_set_time(parameters, time_t(time))
        } else {
            X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_NO_CHECK_TIME))
        }
        let verified = X509_verify_cert(context) == 1
        let code = X509_STORE_CTX_get_error(context)
        guard verified else {
            return .rejected(code: code, reason: String(cString: X509_verify_cert_error_string(Int(code))))
        }
        guard let chain = X509_STORE_CTX_get0_chain(context),
            COpenSSL_sk_X509_num(chain) == Int32(intermediates.count + 2)
        else { return .rejected(code: -1, reason: "chain length differs from leaf, intermediates, root") }
        return .valid
    }
}

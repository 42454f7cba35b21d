import GatewayConfiguration
import PushAttest
import PushCrypto

/// Which root App Attest attestations chain to (docs/protocol.md §5 step 2, §12): Apple's built-in
/// root, or the root in `PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE` when that file holds Apple's root or
/// `PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT=true` accepts another one (tests use a synthetic CA).
package enum AppAttestRoot {
    package static func verifier(for configuration: GatewayConfiguration) -> Result<AttestationVerifier, LifecycleError>
    {
        guard let pem = configuration.appAttestRootPEM else {
            guard let apple = try? AttestationVerifier.apple() else {
                return .failure(
                    LifecycleError(
                        .noUsableAppAttestRoot, reason: "the built-in root does not match its pinned SHA-256"))
            }
            return .success(apple)
        }
        guard let root = try? X509Certificate(pem: String(decoding: pem, as: UTF8.self)) else {
            return .failure(LifecycleError(.noUsableAppAttestRoot, reason: "the configured root is not a certificate"))
        }
        guard AppleAppAttestationRoot.isAppleRoot(root) || configuration.allowsUntrustedAppAttestRoot else {
            return .failure(
                LifecycleError(
                    .noUsableAppAttestRoot, reason: "the configured root is not Apple's and is not explicitly allowed"))
        }
        return .success(AttestationVerifier(root: root))
    }
}

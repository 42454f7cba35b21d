import PushCrypto

extension ConfigurationTestEnvironment {
    /// A copy whose gateway accepts attestations of `authority`: its root as the explicit untrusted
    /// App Attest root (docs/decisions/0071).
    public func trusting(_ authority: SyntheticAppAttestAuthority) throws -> ConfigurationTestEnvironment {
        let rootPath = try write(
            "app-attest-root.pem",
            "-----BEGIN CERTIFICATE-----\n" + Base64.encode(authority.root.derEncoded) + "\n-----END CERTIFICATE-----\n"
        )
        return with("PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE", rootPath)
            .with("PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT", "true")
    }
}

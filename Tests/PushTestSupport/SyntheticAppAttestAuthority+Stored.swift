import PushCrypto

extension SyntheticAppAttestAuthority {
    /// An authority rebuilt from parts saved earlier (e.g. by `push-gateway-demo init-root`), so
    /// the root a gateway was started with keeps issuing device certificates in later processes.
    public init(
        rootKey: P256PrivateKey, root: X509Certificate, intermediateKey: P256PrivateKey,
        intermediate: X509Certificate, notBefore: Int64, notAfter: Int64
    ) {
        self.rootKey = rootKey
        self.root = root
        self.intermediateKey = intermediateKey
        self.intermediate = intermediate
        self.notBefore = notBefore
        self.notAfter = notAfter
    }
}

import Foundation
import PushCrypto

/// The synthetic Key Attestation CA of a local run, standing in for Google's (docs/decisions/0741):
/// a root and an intermediate, both P-256, in ``LocalCertificateAuthority``'s directory layout, so
/// that the gateway started with `root.pem` (`PUSH_GATEWAY_ANDROID_ATTESTATION_ROOT_CA_FILE`) and
/// the demo, a later process, agree.
struct LocalKeyAttestationRoot {
    let authority: LocalCertificateAuthority

    /// Creates the CA under `directory` unless its root already exists; returns whether it did.
    @discardableResult
    static func create(in directory: String, now: Int64 = Int64(Date().timeIntervalSince1970)) throws -> Bool {
        try LocalCertificateAuthority.create(in: directory, now: now) { validity in
            try .issue(
                rootName: "push-gateway-demo Key Attestation Root",
                intermediateName: "push-gateway-demo Key Attestation CA", validity: validity)
        }
    }

    /// The CA saved under `directory` by ``create(in:now:)``.
    static func load(from directory: String) throws -> LocalKeyAttestationRoot {
        LocalKeyAttestationRoot(
            authority: try .load(from: directory, kind: "Key Attestation", initCommand: "init-android-root"))
    }

    /// What `KeyStore.getCertificateChain(alias)` returns for `key`, leaf first: a leaf carrying
    /// `description`, issued by the intermediate, then the intermediate and the root.
    func attestationChain(for key: P256PublicKey, description: DemoKeyDescription) throws -> [[UInt8]] {
        let leaf = try X509CertificateBuilder(
            subjectCommonName: "Android Keystore Key", serialNumber: Int.random(in: 1...Int.max),
            notBefore: authority.validity.lowerBound, notAfter: authority.validity.upperBound,
            extensions: [
                .keyUsage(isCertificateAuthority: false),
                .init(oid: DemoKeyDescription.extensionOID, isCritical: false, value: description.encoded),
            ]
        ).issue(subjectKey: key, issuer: authority.intermediate.certificate, issuerKey: authority.intermediate.key)
        return [leaf.derEncoded, authority.intermediate.certificate.derEncoded, authority.root.certificate.derEncoded]
    }
}

import Foundation
import PushCrypto

/// The synthetic Key Attestation CA of a local run, standing in for Google's (docs/decisions/0741):
/// a root and an intermediate, both P-256, kept in one directory so that the gateway started with
/// `root.pem` (`PUSH_GATEWAY_ANDROID_ATTESTATION_ROOT_CA_FILE`) and the demo, a later process,
/// agree. Files as ``LocalAppAttestRoot``'s: `root.pem`, `intermediate.pem`, `root-key.pem` and
/// `intermediate-key.pem` (PKCS#8, mode 0600) and `validity`.
struct LocalKeyAttestationRoot {
    let rootKey: P256PrivateKey
    let root: X509Certificate
    let intermediateKey: P256PrivateKey
    let intermediate: X509Certificate
    let notBefore: Int64
    let notAfter: Int64

    /// Creates the CA under `directory` unless its root already exists; returns whether it did.
    @discardableResult
    static func create(in directory: String, now: Int64 = Int64(Date().timeIntervalSince1970)) throws -> Bool {
        let files = FileManager.default
        if files.fileExists(atPath: path(directory, LocalAppAttestRoot.rootCertificateFile)) { return false }
        try files.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let notBefore = now - 86_400
        let notAfter = now + LocalAppAttestRoot.lifetimeSeconds
        let rootKey = try P256PrivateKey.generate()
        let intermediateKey = try P256PrivateKey.generate()
        let authority: [X509CertificateBuilder.Extension] = [
            .basicConstraints(isCertificateAuthority: true), .keyUsage(isCertificateAuthority: true),
        ]
        let root = try X509CertificateBuilder(
            subjectCommonName: "push-gateway-demo Key Attestation Root", serialNumber: 1, notBefore: notBefore,
            notAfter: notAfter, extensions: authority
        ).issue(subjectKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
        let intermediate = try X509CertificateBuilder(
            subjectCommonName: "push-gateway-demo Key Attestation CA", serialNumber: 2, notBefore: notBefore,
            notAfter: notAfter, extensions: authority
        ).issue(subjectKey: intermediateKey.publicKey, issuer: root, issuerKey: rootKey)
        // Keys and validity first, the root last: an interrupted run leaves no root.pem to half-load.
        try write(rootKey.pkcs8PEM(), to: path(directory, LocalAppAttestRoot.rootKeyFile), mode: 0o600)
        try write(
            intermediateKey.pkcs8PEM(), to: path(directory, LocalAppAttestRoot.intermediateKeyFile), mode: 0o600)
        try write(
            LocalAppAttestRoot.pem(intermediate), to: path(directory, LocalAppAttestRoot.intermediateCertificateFile),
            mode: 0o644)
        try write("\(notBefore) \(notAfter)\n", to: path(directory, LocalAppAttestRoot.validityFile), mode: 0o644)
        try write(
            LocalAppAttestRoot.pem(root), to: path(directory, LocalAppAttestRoot.rootCertificateFile), mode: 0o644)
        return true
    }

    /// The CA saved under `directory` by ``create(in:now:)``.
    static func load(from directory: String) throws -> LocalKeyAttestationRoot {
        func read(_ name: String) throws -> String {
            guard let data = FileManager.default.contents(atPath: path(directory, name)) else {
                throw DemoError(
                    "cannot read \(name) in the Key Attestation root directory (run init-android-root first)")
            }
            return String(decoding: data, as: UTF8.self)
        }
        let validity = try read(LocalAppAttestRoot.validityFile).split(whereSeparator: \.isWhitespace)
            .compactMap { Int64($0) }
        guard validity.count == 2 else {
            throw DemoError("\(LocalAppAttestRoot.validityFile) must hold two Unix times")
        }
        do {
            return LocalKeyAttestationRoot(
                rootKey: try P256PrivateKey(pem: try read(LocalAppAttestRoot.rootKeyFile)),
                root: try X509Certificate(pem: try read(LocalAppAttestRoot.rootCertificateFile)),
                intermediateKey: try P256PrivateKey(pem: try read(LocalAppAttestRoot.intermediateKeyFile)),
                intermediate: try X509Certificate(pem: try read(LocalAppAttestRoot.intermediateCertificateFile)),
                notBefore: validity[0], notAfter: validity[1])
        } catch let error as DemoError {
            throw error
        } catch {
            throw DemoError("the Key Attestation root directory holds an unreadable certificate or key")
        }
    }

    /// What `KeyStore.getCertificateChain(alias)` returns for `key`, leaf first: a leaf carrying
    /// `description`, issued by the intermediate, then the intermediate and the root.
    func attestationChain(for key: P256PublicKey, description: DemoKeyDescription) throws -> [[UInt8]] {
        let leaf = try X509CertificateBuilder(
            subjectCommonName: "Android Keystore Key", serialNumber: Int.random(in: 1...Int.max), notBefore: notBefore,
            notAfter: notAfter,
            extensions: [
                .keyUsage(isCertificateAuthority: false),
                .init(oid: DemoKeyDescription.extensionOID, isCritical: false, value: description.encoded),
            ]
        ).issue(subjectKey: key, issuer: intermediate, issuerKey: intermediateKey)
        return [leaf.derEncoded, intermediate.derEncoded, root.derEncoded]
    }

    private static func path(_ directory: String, _ name: String) -> String {
        (directory as NSString).appendingPathComponent(name)
    }

    private static func write(_ text: String, to path: String, mode: Int) throws {
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode])
        else { throw DemoError("cannot write \((path as NSString).lastPathComponent)") }
    }
}

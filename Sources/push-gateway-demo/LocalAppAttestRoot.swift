import Foundation
import PushTestSupport

/// The synthetic App Attest CA of a local run (docs/decisions/0110): the test-support library's
/// authority, saved and loaded in ``LocalCertificateAuthority``'s directory layout.
enum LocalAppAttestRoot {
    /// Creates the CA under `directory` unless its root already exists; returns whether it did.
    @discardableResult
    static func create(in directory: String, now: Int64 = Int64(Date().timeIntervalSince1970)) throws -> Bool {
        try LocalCertificateAuthority.create(in: directory, now: now) { validity in
            let authority = try SyntheticAppAttestAuthority(
                notBefore: validity.lowerBound, notAfter: validity.upperBound)
            return LocalCertificateAuthority(
                root: .init(key: authority.rootKey, certificate: authority.root),
                intermediate: .init(key: authority.intermediateKey, certificate: authority.intermediate),
                validity: validity)
        }
    }

    /// The CA saved under `directory` by ``create(in:now:)``.
    static func load(from directory: String) throws -> SyntheticAppAttestAuthority {
        let saved = try LocalCertificateAuthority.load(from: directory, kind: "App Attest", initCommand: "init-root")
        return SyntheticAppAttestAuthority(
            rootKey: saved.root.key, root: saved.root.certificate, intermediateKey: saved.intermediate.key,
            intermediate: saved.intermediate.certificate, notBefore: saved.validity.lowerBound,
            notAfter: saved.validity.upperBound)
    }
}

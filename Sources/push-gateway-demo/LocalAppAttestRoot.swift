import Foundation
import PushCrypto
import PushTestSupport

/// The synthetic App Attest CA of a local run, kept in one directory so that the root the gateway
/// was started with (`root.pem`) and the demo, a later process, agree (docs/decisions/0110):
/// `root.pem` and `intermediate.pem` (certificates), `root-key.pem` and `intermediate-key.pem`
/// (PKCS#8, mode 0600) and `validity` (`notBefore notAfter` in Unix seconds).
enum LocalAppAttestRoot {
    static let rootCertificateFile = "root.pem"
    static let rootKeyFile = "root-key.pem"
    static let intermediateCertificateFile = "intermediate.pem"
    static let intermediateKeyFile = "intermediate-key.pem"
    static let validityFile = "validity"

    /// How long a local root stays valid: long enough that a developer's `.local/` does not go
    /// stale, short enough to stay an obviously throwaway credential.
    static let lifetimeSeconds: Int64 = 10 * 365 * 86_400

    /// Creates the CA under `directory` unless its root already exists; returns whether it did.
    @discardableResult
    static func create(in directory: String, now: Int64 = Int64(Date().timeIntervalSince1970)) throws -> Bool {
        let files = FileManager.default
        if files.fileExists(atPath: path(directory, rootCertificateFile)) { return false }
        try files.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let authority = try SyntheticAppAttestAuthority(notBefore: now - 86_400, notAfter: now + lifetimeSeconds)
        // Keys and validity first, the root last: a run interrupted halfway leaves no root.pem, so
        // the next run starts over instead of loading half a CA.
        try write(authority.rootKey.pkcs8PEM(), to: path(directory, rootKeyFile), mode: 0o600)
        try write(authority.intermediateKey.pkcs8PEM(), to: path(directory, intermediateKeyFile), mode: 0o600)
        try write(
            pem(authority.intermediate), to: path(directory, intermediateCertificateFile), mode: 0o644)
        try write("\(authority.notBefore) \(authority.notAfter)\n", to: path(directory, validityFile), mode: 0o644)
        try write(pem(authority.root), to: path(directory, rootCertificateFile), mode: 0o644)
        return true
    }

    /// The CA saved under `directory` by ``create(in:now:)``.
    static func load(from directory: String) throws -> SyntheticAppAttestAuthority {
        func read(_ name: String) throws -> String {
            guard let data = FileManager.default.contents(atPath: path(directory, name)) else {
                throw DemoError("cannot read \(name) in the App Attest root directory (run init-root first)")
            }
            return String(decoding: data, as: UTF8.self)
        }
        let validity = try read(validityFile).split(whereSeparator: \.isWhitespace).compactMap { Int64($0) }
        guard validity.count == 2 else { throw DemoError("\(validityFile) must hold two Unix times") }
        do {
            return SyntheticAppAttestAuthority(
                rootKey: try P256PrivateKey(pem: try read(rootKeyFile)),
                root: try X509Certificate(pem: try read(rootCertificateFile)),
                intermediateKey: try P256PrivateKey(pem: try read(intermediateKeyFile)),
                intermediate: try X509Certificate(pem: try read(intermediateCertificateFile)),
                notBefore: validity[0], notAfter: validity[1])
        } catch let error as DemoError {
            throw error
        } catch {
            throw DemoError("the App Attest root directory holds an unreadable certificate or key")
        }
    }

    /// A certificate as PEM with 64-character base64 lines (RFC 7468 §2).
    static func pem(_ certificate: X509Certificate) -> String {
        var base64 = Substring(Base64.encode(certificate.derEncoded))
        var lines: [Substring] = []
        while !base64.isEmpty {
            lines.append(base64.prefix(64))
            base64 = base64.dropFirst(64)
        }
        return "-----BEGIN CERTIFICATE-----\n" + lines.joined(separator: "\n") + "\n-----END CERTIFICATE-----\n"
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

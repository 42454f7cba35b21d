import Foundation
import PushCrypto

/// A synthetic two-level P-256 CA of a local run, the App Attest one (docs/decisions/0110) and the
/// Key Attestation one (0741), kept in one directory so that the root the gateway was started with
/// (`root.pem`) and the demo, a later process, agree: `root.pem` and `intermediate.pem`
/// (certificates), `root-key.pem` and `intermediate-key.pem` (PKCS#8, mode 0600) and `validity`
/// (`notBefore notAfter` in Unix seconds).
struct LocalCertificateAuthority {
    /// One level of the CA: its key and its certificate, saved as `<name>-key.pem` and `<name>.pem`.
    struct Level {
        let key: P256PrivateKey
        let certificate: X509Certificate
    }

    let root: Level
    let intermediate: Level
    /// The validity of both certificates, Unix seconds.
    let validity: ClosedRange<Int64>

    static let rootCertificateFile = "root.pem"
    static let validityFile = "validity"

    /// How long a local root stays valid: long enough that a developer's `.local/` does not go
    /// stale, short enough to stay an obviously throwaway credential.
    static let lifetimeSeconds: Int64 = 10 * 365 * 86_400

    /// A fresh self-signed root and an intermediate it issues, both CAs, valid for `validity`.
    static func issue(rootName: String, intermediateName: String, validity: ClosedRange<Int64>) throws -> Self {
        let authority: [X509CertificateBuilder.Extension] = [
            .basicConstraints(isCertificateAuthority: true), .keyUsage(isCertificateAuthority: true),
        ]
        func level(_ name: String, serialNumber: Int, issuer: Level?) throws -> Level {
            let key = try P256PrivateKey.generate()
            let certificate = try X509CertificateBuilder(
                subjectCommonName: name, serialNumber: serialNumber, notBefore: validity.lowerBound,
                notAfter: validity.upperBound, extensions: authority
            ).issue(subjectKey: key.publicKey, issuer: issuer?.certificate, issuerKey: issuer?.key ?? key)
            return Level(key: key, certificate: certificate)
        }
        let root = try level(rootName, serialNumber: 1, issuer: nil)
        return Self(
            root: root, intermediate: try level(intermediateName, serialNumber: 2, issuer: root), validity: validity)
    }

    /// Creates the CA `issue` makes for the validity it is given under `directory`, unless a root
    /// already exists there; returns whether it did.
    static func create(
        in directory: String, now: Int64, issue: (_ validity: ClosedRange<Int64>) throws -> Self
    ) throws -> Bool {
        let files = FileManager.default
        if files.fileExists(atPath: path(directory, rootCertificateFile)) { return false }
        try files.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let authority = try issue((now - 86_400)...(now + lifetimeSeconds))
        // Keys and validity first, the root last: a run interrupted halfway leaves no root.pem, so
        // the next run starts over instead of loading half a CA.
        try write(authority.root.key.pkcs8PEM(), to: path(directory, "root-key.pem"), mode: 0o600)
        try write(authority.intermediate.key.pkcs8PEM(), to: path(directory, "intermediate-key.pem"), mode: 0o600)
        try write(
            "\(authority.validity.lowerBound) \(authority.validity.upperBound)\n", to: path(directory, validityFile),
            mode: 0o644)
        try write(pem(authority.intermediate.certificate), to: path(directory, "intermediate.pem"), mode: 0o644)
        try write(pem(authority.root.certificate), to: path(directory, rootCertificateFile), mode: 0o644)
        return true
    }

    /// The CA saved under `directory` by ``create(in:now:issue:)``; `kind` and `initCommand` name it
    /// in the errors.
    static func load(from directory: String, kind: String, initCommand: String) throws -> Self {
        func read(_ name: String) throws -> String {
            guard let data = FileManager.default.contents(atPath: path(directory, name)) else {
                throw DemoError("cannot read \(name) in the \(kind) root directory (run \(initCommand) first)")
            }
            return String(decoding: data, as: UTF8.self)
        }
        func level(_ name: String) throws -> Level {
            Level(
                key: try P256PrivateKey(pem: try read(name + "-key.pem")),
                certificate: try X509Certificate(pem: try read(name + ".pem")))
        }
        let validity = try read(validityFile).split(whereSeparator: \.isWhitespace).compactMap { Int64($0) }
        guard validity.count == 2, validity[0] <= validity[1] else {
            throw DemoError("\(validityFile) must hold two Unix times")
        }
        do {
            return Self(
                root: try level("root"), intermediate: try level("intermediate"), validity: validity[0]...validity[1])
        } catch let error as DemoError {
            throw error
        } catch {
            throw DemoError("the \(kind) root directory holds an unreadable certificate or key")
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

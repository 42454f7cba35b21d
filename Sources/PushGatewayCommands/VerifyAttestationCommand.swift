import Foundation
import Glibc
import PushAttest
import PushCrypto
import PushGateway

/// `push-gateway verify-attestation` (docs/protocol.md §12): offline App Attest attestation check for app
/// developers. Prints one JSON object and exits 0 (valid), 1 (invalid) or 2 (bad flags).
enum VerifyAttestationCommand: DiagnosticCommand {
    static let usage = """
        usage: push-gateway verify-attestation --app-id ID --environment production|development --key-id B64
                 (--client-data-file F | --client-data-hash HEX) --attestation-file F [--at UNIX] [--root-ca-file F]

        """

    static let name = "verify-attestation"
    static let allowedFlags: Set<String> = [
        "--app-id", "--environment", "--key-id", "--client-data-file", "--client-data-hash",
        "--attestation-file", "--at", "--root-ca-file",
    ]

    static func diagnose(_ flags: DiagnosticFlags) throws(UsageError) -> CommandResult {
        let appID = try flags.required("--app-id")
        guard let attestEnvironment = AppAttestEnvironment(rawValue: try flags.required("--environment")) else {
            throw UsageError("--environment must be production or development")
        }
        guard let keyID = Base64.decode(try flags.required("--key-id")) else {
            throw UsageError("--key-id must be standard base64")
        }
        let clientDataHash = try flags.clientDataHash()
        let attestation = try flags.cborFile("--attestation-file")
        let time = try flags.unixTime("--at") ?? Int64(Glibc.time(nil))
        let verifier: AttestationVerifier
        if let rootPath = flags.values["--root-ca-file"] {
            verifier = AttestationVerifier(root: try DiagnosticFlags.certificate(atPath: rootPath))
        } else {
            do {
                verifier = try AttestationVerifier.apple()
            } catch {
                return .failure(
                    "push-gateway verify-attestation: the built-in Apple App Attestation Root CA "
                        + "does not match its pinned SHA-256\n")
            }
        }
        do {
            let attested = try verifier.verify(
                attestationObject: attestation, clientDataHash: clientDataHash, keyID: keyID, appID: appID,
                environment: attestEnvironment, at: time)
            let keyID = Base64.encode(attested.keyID)
            let publicKey = Hex.encode(attested.publicKey.uncompressedPoint)
            return .success("{\"ok\":true,\"key_id\":\"\(keyID)\",\"public_key\":\"\(publicKey)\"}\n")
        } catch {
            return .invalid(error)
        }
    }
}

extension CommandResult {
    /// A diagnostic command's verdict on an invalid attestation or assertion: one JSON object naming
    /// the reason on standard output, exit status 1.
    static func invalid(_ reason: AppAttestError) -> CommandResult {
        CommandResult(
            exitCode: 1, standardOutput: "{\"ok\":false,\"reason\":\"\(reason.code)\"}\n", standardError: "")
    }
}

/// An offline diagnostic command of docs/protocol.md §12: `--name value` flags (and value-less
/// switches), bad flags answered with the problem and the usage on standard error, exit status 2.
protocol DiagnosticCommand: InProcessCommand {
    /// The command word after `push-gateway`.
    static var name: String { get }
    static var usage: String { get }
    static var allowedFlags: Set<String> { get }
    static var switches: Set<String> { get }
    /// The verdict on the parsed flags; a usage error for flags that are wrong together.
    static func diagnose(_ flags: DiagnosticFlags) throws(UsageError) -> CommandResult
}

extension DiagnosticCommand {
    static var switches: Set<String> { [] }

    static func execute(arguments: [String], environment: [String: String]) -> CommandResult {
        do throws(UsageError) {
            return try diagnose(DiagnosticFlags(arguments, allowed: allowedFlags, switches: switches))
        } catch {
            return .usageError("push-gateway \(name): \(error.message)\n\(usage)")
        }
    }
}

/// `--name value` flags of the diagnostic commands, and the input rules of docs/protocol.md §12.
struct DiagnosticFlags {
    let values: [String: String]
    /// The value-less flags given.
    let switches: Set<String>

    /// Every flag in `allowed` takes exactly one value, those in `switches` none; unknown or
    /// repeated flags are usage errors.
    init(_ arguments: [String], allowed: Set<String>, switches allowedSwitches: Set<String> = []) throws(UsageError) {
        var values: [String: String] = [:]
        var switches: Set<String> = []
        var index = 0
        while index < arguments.count {
            let name = arguments[index]
            guard values[name] == nil, !switches.contains(name) else { throw UsageError("\(name) given twice") }
            if allowedSwitches.contains(name) {
                switches.insert(name)
                index += 1
                continue
            }
            guard allowed.contains(name) else { throw UsageError("unknown argument \(name)") }
            guard index + 1 < arguments.count else { throw UsageError("\(name) needs a value") }
            values[name] = arguments[index + 1]
            index += 2
        }
        self.values = values
        self.switches = switches
    }

    func required(_ name: String) throws(UsageError) -> String {
        guard let value = values[name] else { throw UsageError("\(name) is required") }
        return value
    }

    /// `--client-data-file` (its bytes, hashed with SHA-256) or `--client-data-hash` (hex, used as
    /// given, any length); exactly one of them.
    func clientDataHash() throws(UsageError) -> [UInt8] {
        guard let hash = try hashOrHex(fileFlag: "--client-data-file", hexFlag: "--client-data-hash") else {
            throw UsageError("exactly one of --client-data-file and --client-data-hash is required")
        }
        return hash
    }

    /// A file holding CBOR: decoded when its whitespace-trimmed content is valid standard base64,
    /// taken as raw bytes otherwise.
    func cborFile(_ name: String) throws(UsageError) -> [UInt8] {
        let contents = try Self.contents(ofFile: try required(name), flag: name)
        return Self.decodeBase64OrRaw(contents)
    }

    static func decodeBase64OrRaw(_ contents: [UInt8]) -> [UInt8] {
        let isWhitespace: (UInt8) -> Bool = { [0x20, 0x09, 0x0a, 0x0d, 0x0b, 0x0c].contains($0) }
        let trimmed = contents.drop(while: isWhitespace).reversed().drop(while: isWhitespace).reversed()
        guard trimmed.allSatisfy({ $0 < 0x80 }),
            let decoded = Base64.decode(String(decoding: Array(trimmed), as: UTF8.self))
        else { return contents }
        return decoded
    }

    /// Integer Unix seconds.
    func unixTime(_ name: String) throws(UsageError) -> Int64? {
        guard let text = values[name] else { return nil }
        guard let seconds = Int64(text), text.first != "+" else {
            throw UsageError("\(name) must be integer Unix seconds")
        }
        return seconds
    }

    /// `--client-data-file`-style input: the SHA-256 of the file named by `fileFlag`, or the hex
    /// of `hexFlag` used as given; at most one of them (`nil` when neither is given).
    func hashOrHex(fileFlag: String, hexFlag: String) throws(UsageError) -> [UInt8]? {
        switch (values[fileFlag], values[hexFlag]) {
        case (nil, nil):
            return nil
        case (let path?, nil):
            return SHA256.hash(try Self.contents(ofFile: path, flag: fileFlag))
        case (nil, let hex?):
            guard let bytes = Hex.decode(hex) else { throw UsageError("\(hexFlag) must be hexadecimal") }
            return bytes
        default:
            throw UsageError("give at most one of \(fileFlag) and \(hexFlag)")
        }
    }

    /// A PEM or DER certificate file.
    static func certificate(atPath path: String) throws(UsageError) -> X509Certificate {
        let contents = try contents(ofFile: path, flag: "--root-ca-file")
        let text = String(decoding: contents, as: UTF8.self)
        let certificate =
            text.contains("-----BEGIN CERTIFICATE-----")
            ? try? X509Certificate(pem: text) : try? X509Certificate(derEncoded: contents)
        guard let certificate else { throw UsageError("--root-ca-file is not a PEM or DER certificate") }
        return certificate
    }

    static func contents(ofFile path: String, flag: String) throws(UsageError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(flag)") }
        return Array(data)
    }
}

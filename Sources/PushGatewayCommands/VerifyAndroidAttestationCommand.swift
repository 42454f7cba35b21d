import Glibc
import PushCrypto
import PushJSON
import PushKeyAttestation

/// `push-gateway verify-android-attestation` (docs/protocol.md §12): offline Key Attestation
/// diagnostics for app developers. Prints one JSON object — `ok`, the first failing step's `reason`
/// and the parsed fields — and exits 0 (valid), 1 (invalid) or 2 (bad flags).
enum VerifyAndroidAttestationCommand: DiagnosticCommand {
    static let usage = """
        usage: push-gateway verify-android-attestation --chain-file F [--challenge-hex H | --transcript-file F]
                 [--package P] [--signing-cert-sha256 HEX[,HEX...]] [--min-security-level tee|strongbox]
                 [--verified-boot-key HEX[,HEX...]] [--chain-only] [--at UNIX] [--status-file F]
                 [--root-ca-file F]

        """

    static let name = "verify-android-attestation"
    static let allowedFlags: Set<String> = [
        "--chain-file", "--challenge-hex", "--transcript-file", "--package", "--signing-cert-sha256",
        "--min-security-level", "--verified-boot-key", "--at", "--status-file", "--root-ca-file",
    ]
    static let switches: Set<String> = ["--chain-only"]

    static func diagnose(_ flags: DiagnosticFlags) throws(UsageError) -> CommandResult {
        let chainPath = try flags.required("--chain-file")
        let chain = AttestationChainFile.certificates(
            try DiagnosticFlags.contents(ofFile: chainPath, flag: "--chain-file"))
        let requirements = try requirements(flags)
        let time = try flags.unixTime("--at") ?? Int64(Glibc.time(nil))
        let statusList = try flags.values["--status-file"].map { path throws(UsageError) in
            do throws(KeyAttestationError) {
                return try KeyAttestationStatusList.read(fromFile: path, at: time)
            } catch {
                throw UsageError("--status-file: \(error)")
            }
        }
        guard var verifier = try? KeyAttestationVerifier.google() else {
            return .failure(
                "push-gateway verify-android-attestation: a built-in Google attestation root does not have its "
                    + "pinned SubjectPublicKeyInfo SHA-256\n")
        }
        if let rootPath = flags.values["--root-ca-file"] {
            guard
                let extended = try? verifier.trusting(
                    root: DiagnosticFlags.certificate(atPath: rootPath).derEncoded)
            else {
                throw UsageError(
                    "--root-ca-file is not a strict DER certificate with an RSA or EC P-256/P-384 key")
            }
            verifier = extended
        }
        let report = verifier.examine(chain: chain, requirements: requirements, statusList: statusList, at: time)
        // --chain-only counts docs/protocol.md §5a steps 1–3 only; every field is printed either way.
        let counted =
            flags.switches.contains("--chain-only") ? report.failures.filter(\.isChainCheck) : report.failures
        return CommandResult(
            exitCode: counted.isEmpty ? 0 : 1, standardOutput: render(report, reason: counted.first),
            standardError: "")
    }

    private static func requirements(
        _ flags: DiagnosticFlags
    ) throws(UsageError) -> KeyAttestationRequirements {
        var requirements = KeyAttestationRequirements()
        requirements.challenge = try flags.hashOrHex(fileFlag: "--transcript-file", hexFlag: "--challenge-hex")
        requirements.packageName = flags.values["--package"]
        requirements.signingCertificateDigests = try hex32List(flags, "--signing-cert-sha256")
        requirements.verifiedBootKeys = try hex32List(flags, "--verified-boot-key") ?? []
        if let level = flags.values["--min-security-level"] {
            guard let minimum = SecurityLevel(name: level), minimum != .software else {
                throw UsageError("--min-security-level must be tee or strongbox")
            }
            requirements.minimumSecurityLevel = minimum
        }
        return requirements
    }

    /// A comma list of 32-byte values, 64 hex digits each (either case); `nil` when `flag` is not given.
    private static func hex32List(_ flags: DiagnosticFlags, _ flag: String) throws(UsageError) -> [[UInt8]]? {
        guard let list = flags.values[flag] else { return nil }
        let values = list.split(separator: ",", omittingEmptySubsequences: false).map {
            Hex.decode($0, byteCount: 32)
        }
        guard !values.contains(where: { $0 == nil }) else {
            throw UsageError("\(flag) must be 64 hex digits (or a comma list of them)")
        }
        return values.compactMap { $0 }
    }

    /// The output object: members in the order of docs/protocol.md §12, `null` for what the chain
    /// does not have (or could not be parsed).
    static func render(_ report: KeyAttestationReport, reason: KeyAttestationError.Code?) -> String {
        let description = report.keyDescription
        let enforced = description?.hardwareEnforced
        let application = description?.attestationApplicationIDs.first
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("ok", reason == nil)
        writer.optionalMember("reason", reason?.name)
        writer.member("attestation_version", description?.attestationVersion)
        writer.optionalMember("attestation_security_level", description?.attestationSecurityLevel.name)
        writer.optionalMember("keymint_security_level", description?.keyMintSecurityLevel.name)
        writer.optionalMember("challenge_hex", description.map { Hex.encode($0.attestationChallenge) })
        writer.member("origin", enforced?.origin)
        writer.arrayMember("purposes", enforced?.purposes) { $0.integer($1) }
        writer.member("algorithm", enforced?.algorithm)
        writer.member("ec_curve", enforced?.ecCurve)
        writer.name("device_locked")
        if let locked = enforced?.rootOfTrust?.deviceLocked { writer.bool(locked) } else { writer.null() }
        writer.optionalMember("verified_boot_state", enforced?.rootOfTrust?.verifiedBootState.name)
        writer.optionalMember("verified_boot_key", enforced?.rootOfTrust.map { Hex.encode($0.verifiedBootKey) })
        writer.arrayMember("packages", application?.packages) { writer, package in
            writer.beginObject()
            writer.member("name", String(decoding: package.name, as: UTF8.self))
            writer.member("version", package.version)
            writer.endObject()
        }
        writer.arrayMember("signature_digests_sha256_hex", application?.signatureDigests) { $0.string(Hex.encode($1)) }
        writer.optionalMember("root_spki_sha256", report.rootSubjectPublicKeyInfoSHA256.map { Hex.encode($0) })
        writer.arrayMember("serials_hex", report.certificates.isEmpty ? nil : report.certificates) {
            $0.string($1.serialNumberHex)
        }
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self) + "\n"
    }
}

/// The `--chain-file` formats of docs/protocol.md §12.
enum AttestationChainFile {
    /// PEM certificates (leaf first) or the JSON array of standard-base64 DER certificates of
    /// docs/protocol.md §4.2a; an empty chain (reported as `format`) when it is neither.
    static func certificates(_ contents: [UInt8]) -> [[UInt8]] {
        if let array = try? JSONReader.parse(contents), case .array(let elements) = array {
            var certificates: [[UInt8]] = []
            for element in elements {
                guard case .string(let text) = element, let der = Base64.decode(text) else { return [] }
                certificates.append(der)
            }
            return certificates
        }
        return PEMCertificates.decode(String(decoding: contents, as: UTF8.self)) ?? []
    }
}

extension JSONWriter {
    fileprivate mutating func optionalMember(_ name: String, _ text: String?) {
        self.name(name)
        if let text { string(text) } else { null() }
    }

    /// An array member, `null` when `values` is nil.
    fileprivate mutating func arrayMember<Value>(
        _ name: String, _ values: [Value]?, _ write: (inout JSONWriter, Value) -> Void
    ) {
        self.name(name)
        guard let values else { return null() }
        beginArray()
        for value in values { write(&self, value) }
        endArray()
    }
}

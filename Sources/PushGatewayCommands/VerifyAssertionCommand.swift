import PushAttest
import PushCrypto
import PushGateway

/// `push-gateway verify-assertion` (docs/protocol.md §12): offline App Attest assertion check for app
/// developers. Prints one JSON object and exits 0 (valid), 1 (invalid) or 2 (bad flags).
enum VerifyAssertionCommand: DiagnosticCommand {
    static let usage = """
        usage: push-gateway verify-assertion --app-id ID (--public-key HEX | --public-key-file PEM)
                 (--client-data-file F | --client-data-hash HEX) --assertion-file F --previous-counter N

        """

    static let name = "verify-assertion"
    static let allowedFlags: Set<String> = [
        "--app-id", "--public-key", "--public-key-file", "--client-data-file", "--client-data-hash",
        "--assertion-file", "--previous-counter",
    ]

    static func diagnose(_ flags: DiagnosticFlags) throws(UsageError) -> CommandResult {
        let appID = try flags.required("--app-id")
        let publicKey = try publicKey(flags)
        let clientDataHash = try flags.clientDataHash()
        let assertion = try flags.cborFile("--assertion-file")
        let counterText = try flags.required("--previous-counter")
        guard let previousCounter = UInt32(counterText), counterText.first != "+" else {
            throw UsageError("--previous-counter must be an integer in 0...\(UInt32.max)")
        }
        do {
            let counter = try AssertionVerifier.verify(
                assertion: assertion, clientDataHash: clientDataHash, appID: appID, publicKey: publicKey,
                previousCounter: previousCounter)
            return .success("{\"ok\":true,\"counter\":\(counter)}\n")
        } catch {
            return .invalid(error)
        }
    }

    /// `--public-key` (hex of the 65-byte uncompressed point) or `--public-key-file` (PEM), exactly one.
    private static func publicKey(_ flags: DiagnosticFlags) throws(UsageError) -> P256PublicKey {
        switch (flags.values["--public-key"], flags.values["--public-key-file"]) {
        case (let hex?, nil):
            guard let point = Hex.decode(hex), let key = try? P256PublicKey(uncompressedPoint: point) else {
                throw UsageError("--public-key must be the hex of a 65-byte uncompressed P-256 point")
            }
            return key
        case (nil, let path?):
            let pem = String(
                decoding: try DiagnosticFlags.contents(ofFile: path, flag: "--public-key-file"), as: UTF8.self)
            guard let key = try? P256PublicKey(pem: pem) else {
                throw UsageError("--public-key-file must hold a PEM P-256 public key")
            }
            return key
        default:
            throw UsageError("exactly one of --public-key and --public-key-file is required")
        }
    }
}

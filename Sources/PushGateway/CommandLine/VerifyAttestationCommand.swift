/// `push-gateway verify-attestation` (PROTOCOL.md §12).
enum VerifyAttestationCommand {
    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        CommandLineTool.notYetImplemented("verify-attestation")
    }
}

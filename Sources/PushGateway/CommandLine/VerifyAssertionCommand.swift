/// `push-gateway verify-assertion` (PROTOCOL.md §12).
enum VerifyAssertionCommand {
    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        CommandLineTool.notYetImplemented("verify-assertion")
    }
}

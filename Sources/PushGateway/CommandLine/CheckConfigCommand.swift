/// `push-gateway check-config` (PROTOCOL.md §12).
enum CheckConfigCommand {
    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        CommandLineTool.notYetImplemented("check-config")
    }
}

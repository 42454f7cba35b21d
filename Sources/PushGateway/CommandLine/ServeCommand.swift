/// `push-gateway serve` (PROTOCOL.md §12).
enum ServeCommand {
    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        CommandLineTool.notYetImplemented("serve")
    }
}

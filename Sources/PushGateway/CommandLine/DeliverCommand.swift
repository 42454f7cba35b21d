/// `push-gateway deliver` (PROTOCOL.md §12).
enum DeliverCommand {
    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        CommandLineTool.notYetImplemented("deliver")
    }
}

/// `push-gateway keygen` (PROTOCOL.md §12).
enum KeygenCommand {
    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        CommandLineTool.notYetImplemented("keygen")
    }
}

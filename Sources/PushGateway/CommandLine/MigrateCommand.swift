/// `push-gateway migrate` (PROTOCOL.md §12).
enum MigrateCommand {
    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        CommandLineTool.notYetImplemented("migrate")
    }
}

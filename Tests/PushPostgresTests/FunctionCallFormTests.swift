import Foundation
import PushPostgres
import PushSystem
import PushTestSupport
import Testing

/// docs/decisions/0343: `callFunction`'s form from the host's overcommit mode and `RLIMIT_AS`, a
/// pure choice, and the facts read from the files and limits it is made of.
@Suite("The function call form follows the overcommit mode and RLIMIT_AS", .testBodyThreads)
struct FunctionCallFormTests {
    static let gibibyte: UInt64 = 1 << 30

    static func form(mode: Int?, limit: UInt64? = nil, sessions: Int = 16) -> FunctionCallForm {
        FunctionCallFormChoice.choose(
            for: AddressSpaceFacts(overcommitMode: mode, addressSpaceLimit: limit), sessions: sessions
        ).form
    }

    @Test("overcommit modes 0 and 1 without an address-space limit use the FunctionCall message")
    func heuristicAndAlways() {
        #expect(Self.form(mode: 0) == .message)
        #expect(Self.form(mode: 1) == .message)
    }

    @Test("mode 2 charges every mapping, so it uses the statement form whatever the limit")
    func strict() {
        #expect(Self.form(mode: 2) == .statement)
        #expect(Self.form(mode: 2, limit: UInt64.max / 2) == .statement)
        #expect(
            FunctionCallFormChoice.choose(
                for: AddressSpaceFacts(overcommitMode: 2, addressSpaceLimit: nil), sessions: 1
            )
            .reason.contains("overcommit_memory is 2"))
    }

    @Test("an unreadable or unknown mode uses the statement form")
    func unknown() {
        #expect(Self.form(mode: nil) == .statement)
        #expect(Self.form(mode: 3) == .statement)
        #expect(Self.form(mode: -1) == .statement)
    }

    @Test("RLIMIT_AS must hold a 2 GiB buffer per session and 4 GiB besides, else the statement form")
    func addressSpaceLimit() {
        let needed = 16 * 2 * Self.gibibyte + 4 * Self.gibibyte
        #expect(Self.form(mode: 0, limit: needed) == .message)
        #expect(Self.form(mode: 1, limit: needed + 1) == .message)
        #expect(Self.form(mode: 0, limit: needed - 1) == .statement)
        #expect(Self.form(mode: 1, limit: 8 * Self.gibibyte) == .statement)
        #expect(Self.form(mode: 0, limit: 6 * Self.gibibyte, sessions: 1) == .message)
        #expect(Self.form(mode: 0, limit: UInt64.max, sessions: Int.max) == .statement)
        #expect(
            FunctionCallFormChoice.choose(
                for: AddressSpaceFacts(overcommitMode: 0, addressSpaceLimit: Self.gibibyte), sessions: 16
            ).reason.contains("RLIMIT_AS"))
    }

    @Test("the mode is read from the named file: a digit and a newline; anything else or no file is unknown")
    func readsTheMode() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("overcommit-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (text, mode) in [("0\n", 0), ("1\n", 1), ("2\n", 2), ("2", 2), ("two\n", nil), ("", nil)]
            as [(String, Int?)]
        {
            let path = directory.appendingPathComponent("mode").path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            #expect(AddressSpaceFacts.current(overcommitModePath: path).overcommitMode == mode, "\(text)")
        }
        #expect(
            AddressSpaceFacts.current(overcommitModePath: directory.appendingPathComponent("none").path)
                .overcommitMode == nil)
        // This host's own file is readable and holds one of the three modes.
        #expect([0, 1, 2].contains(AddressSpaceFacts.current().overcommitMode))
    }
}

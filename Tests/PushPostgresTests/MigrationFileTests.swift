import Foundation
import PushPostgres
import PushTestSupport
import Testing

@Suite("migration files", .testBodyThreads)
struct MigrationFileTests {
    @Test("file names must be four digits, an underscore, a lowercase description and .sql")
    func fileNameRule() {
        #expect(Migration.version(ofFileName: "0001_initial.sql") == 1)
        #expect(Migration.version(ofFileName: "0042_add_index_2.sql") == 42)
        for bad in [
            "0000_zero.sql", "1_short.sql", "0001-dash.sql", "0001_.sql", "0001_Upper.sql", "0001_initial.SQL",
            "00001_five.sql", "abcd_letters.sql", "0001_initial.sql.bak", "0001_space name.sql",
        ] {
            #expect(Migration.version(ofFileName: bad) == nil, "\(bad)")
        }
    }

    private func folder(_ files: [String: String]) throws -> String {
        let path = NSTemporaryDirectory() + "push-gateway-migration-files-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        for (name, contents) in files {
            try Data(contents.utf8).write(to: URL(fileURLWithPath: path).appendingPathComponent(name))
        }
        return path
    }

    @Test("loading sorts by version, keeps the exact bytes and ignores files that are not SQL")
    func loadsInOrder() throws {
        let path = try folder([
            "0002_second.sql": "B", "0001_first.sql": "A\n", "README.md": "notes", "0003_third.sql": "C",
        ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let migrations = try Migration.load(directory: path)
        #expect(migrations.map(\.version) == [1, 2, 3])
        #expect(migrations.map(\.fileName) == ["0001_first.sql", "0002_second.sql", "0003_third.sql"])
        #expect(migrations[0].contents == Array("A\n".utf8))
    }

    @Test("a badly named SQL file, a gap, a repeated version or an empty folder stops the load")
    func loadRefusals() throws {
        let cases: [([String: String], String)] = [
            (["0001_first.sql": "", "second.sql": ""], "naming rule"),
            (["0001_first.sql": "", "0003_third.sql": ""], "version 2 is missing"),
            (["0001_first.sql": "", "0001_again.sql": ""], "more than one file"),
            (["README.md": ""], "no migration files"),
        ]
        for (files, expected) in cases {
            let path = try folder(files)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let error = try #require(throws: PostgresError.self) { try Migration.load(directory: path) }
            #expect(error.code == .migration)
            #expect(error.description == error.message, "a refusal prints its message alone, as migrate shows it")
            #expect(error.message.contains(expected), "\(error.message)")
        }
        let missing = try #require(throws: PostgresError.self) {
            try Migration.load(directory: "/nonexistent/push-gateway")
        }
        #expect(missing.message.contains("cannot read"))
    }
}

import Foundation

/// One forward-only schema migration file, `NNNN_description.sql` (Migrations/README.md).
public struct Migration: Sendable, Equatable {
    /// The number in the file name; versions run 1, 2, 3, … without gaps.
    public let version: Int
    public let fileName: String
    /// The file's bytes exactly as read; the recorded checksum is SHA-256 of these.
    public let contents: [UInt8]

    /// The file as SQL text (validated as UTF-8 when loaded).
    public var sql: String { String(decoding: contents, as: UTF8.self) }

    /// The version encoded in a migration file name, or nil when the name breaks the rule:
    /// four digits (not 0000), `_`, then one or more of `a-z`, `0-9`, `_`, then `.sql`.
    public static func version(ofFileName name: String) -> Int? {
        let bytes = Array(name.utf8)
        guard bytes.count > 9, name.hasSuffix(".sql"), bytes[4] == UInt8(ascii: "_") else { return nil }
        let digits = bytes[0..<4]
        let description = bytes[5..<(bytes.count - 4)]
        guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            !description.isEmpty,
            description.allSatisfy({
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_")
            }),
            let version = Int(String(decoding: digits, as: UTF8.self)), version > 0
        else { return nil }
        return version
    }

    /// Reads every `*.sql` file of `directory`, sorted by version. Other files are ignored. Fails
    /// when a `.sql` name breaks the naming rule, a version repeats or is missing from the
    /// sequence, a file is not UTF-8, or there is no migration at all.
    public static func load(directory: String) throws(PostgresError) -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw .migration("cannot read the migrations directory \(directory)")
        }
        var migrations: [Migration] = []
        for name in names.sorted() where name.hasSuffix(".sql") {
            guard let version = version(ofFileName: name) else {
                throw .migration("\(name) does not follow the NNNN_description.sql naming rule")
            }
            let path = (directory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw .migration("cannot read \(name)")
            }
            let contents = [UInt8](data)
            guard String(validating: contents, as: UTF8.self) != nil else {
                throw .migration("\(name) is not UTF-8 text")
            }
            migrations.append(Migration(version: version, fileName: name, contents: contents))
        }
        migrations.sort { $0.version < $1.version }
        guard !migrations.isEmpty else { throw .migration("no migration files in \(directory)") }
        for (index, migration) in migrations.enumerated() where migration.version != index + 1 {
            if index > 0 && migrations[index - 1].version == migration.version {
                throw .migration("version \(migration.version) is used by more than one file")
            }
            throw .migration("migration version \(index + 1) is missing; versions must run 1, 2, 3, … without gaps")
        }
        return migrations
    }
}

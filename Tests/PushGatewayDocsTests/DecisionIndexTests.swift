import Foundation
import PushTestSupport
import Testing

/// docs/decisions/README.md indexes every record: number, title and status (docs/decisions/0755).
/// The check is a pure function of the README's text and the records, so each kind of drift can be
/// planted in a unit test and shown to be caught.
enum DecisionIndex {
    /// A record file and the text of its first line, `# NNNN — title`.
    struct Record: Sendable {
        let fileName: String
        let heading: String
    }

    /// A row of the index table: `| [NNNN](file.md) | title | status |`.
    struct Row: Sendable {
        let number: String
        let fileName: String
        let title: String
        let status: String
    }

    static let readmePath = "docs/decisions/README.md"

    /// Every way `readme` disagrees with `records`, one sentence each; empty when they agree.
    static func violations(readme: String, records: [Record]) -> [String] {
        var problems: [String] = []
        var titles: [String: String] = [:]
        for record in records {
            guard let title = title(of: record, problems: &problems) else { continue }
            titles[record.fileName] = title
        }
        let numbers = Set(records.map { String($0.fileName.prefix(4)) })
        var indexed: Set<String> = []
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false) where isRowCandidate(line) {
            guard let row = row(from: line) else {
                problems.append(
                    "\(readmePath): the row \"\(line)\" is not in the form "
                        + "| [NNNN](NNNN-name.md) | title | accepted, amended by NNNN or superseded by NNNN |")
                continue
            }
            if !indexed.insert(row.fileName).inserted {
                problems.append("\(readmePath) lists \(row.fileName) twice: keep one row")
            }
            if !row.fileName.hasPrefix(row.number + "-") {
                problems.append("\(readmePath): the row [\(row.number)] links \(row.fileName), another record's file")
            }
            guard let heading = titles[row.fileName] else {
                if !records.contains(where: { $0.fileName == row.fileName }) {
                    problems.append(
                        "\(readmePath) has a row for \(row.fileName), which is not a file in docs/decisions: "
                            + "remove the row, or fix its file name")
                }
                continue
            }
            if row.title != heading {
                problems.append(
                    "\(readmePath): the title of \(row.fileName) is \"\(row.title)\", but the record's heading "
                        + "says \"\(heading)\": copy the heading's title into the row")
            }
            guard let cited = citedRecords(in: row.status) else {
                problems.append(
                    "\(readmePath): the status of \(row.fileName) is \"\(row.status)\"; it must be accepted, "
                        + "amended by NNNN[, NNNN…] or superseded by NNNN[, NNNN…]")
                continue
            }
            for number in cited where !numbers.contains(number) {
                problems.append(
                    "\(readmePath): the status of \(row.fileName) cites \(number), and docs/decisions has no "
                        + "record \(number)")
            }
        }
        for record in records where !indexed.contains(record.fileName) {
            let title = titles[record.fileName] ?? "its title"
            problems.append(
                "docs/decisions/\(record.fileName) has no row in \(readmePath). Every record needs one; "
                    + "records written on other branches get theirs when they are merged, by whoever merges "
                    + "them. Add: | [\(record.fileName.prefix(4))](\(record.fileName)) | \(title) | accepted |")
        }
        return problems
    }

    /// Records the index marks amended or superseded whose text does not say so: each number a
    /// status cites must appear in a line of the record starting `**Amended by` (or `**Superseded
    /// by`), so that a reader of the record sees it without the index.
    static func unmarkedRecords(readme: String, recordTexts: [String: String]) -> [String] {
        var problems: [String] = []
        for line in readme.split(separator: "\n") where isRowCandidate(line) {
            guard let row = row(from: line), let text = recordTexts[row.fileName],
                let cited = citedRecords(in: row.status), !cited.isEmpty
            else { continue }
            let marker = row.status.hasPrefix("superseded") ? "**Superseded by" : "**Amended by"
            let notes = text.split(separator: "\n").filter { $0.hasPrefix(marker) }
            for number in cited where !notes.contains(where: { $0.contains(number) }) {
                problems.append(
                    "docs/decisions/\(row.fileName) is \(row.status) in the index, but has no line starting "
                        + "\"\(marker)\" that names \(number): add one below its heading")
            }
        }
        return problems
    }

    /// The title of a `# NNNN — title` heading whose number is the file's; nil (with a problem) otherwise.
    static func title(of record: Record, problems: inout [String]) -> String? {
        let number = record.fileName.prefix(4)
        guard record.fileName.wholeMatch(of: /\d{4}-[a-z0-9-]+\.md/) != nil,
            let match = record.heading.wholeMatch(of: /# (\d{4}) — (.+)/), match.output.1 == number
        else {
            problems.append(
                "docs/decisions/\(record.fileName) must be named NNNN-name.md and start with the heading "
                    + "\"# \(number) — title\"")
            return nil
        }
        return String(match.output.2)
    }

    static func isRowCandidate(_ line: Substring) -> Bool {
        line.hasPrefix("|") && line.contains("](")
    }

    static func row(from line: Substring) -> Row? {
        guard let match = line.wholeMatch(of: /\| \[(\d{4})\]\(([^)\s]+)\) \| (.+) \| ([^|]+) \|/) else { return nil }
        return Row(
            number: String(match.output.1), fileName: String(match.output.2), title: String(match.output.3),
            status: String(match.output.4))
    }

    /// The record numbers a status cites: none for `accepted`; nil for a status of another form.
    static func citedRecords(in status: String) -> [String]? {
        if status == "accepted" { return [] }
        guard let match = status.wholeMatch(of: /(?:amended|superseded) by (\d{4}(?:, \d{4})*)/) else { return nil }
        return match.output.1.split(separator: ", ").map(String.init)
    }
}

@Suite("docs/decisions/README.md indexes every decision record with its title and status", .testBodyThreads)
struct DecisionIndexTests {
    static let folder = "docs/decisions"

    static func recordFileNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: DocsTests.repository.appendingPathComponent(folder).path)
            .filter { $0 != "README.md" && $0.hasSuffix(".md") }.sorted()
    }

    static func recordText(_ fileName: String) throws -> String {
        try DocsTests.read(folder + "/" + fileName)
    }

    static func records() throws -> [DecisionIndex.Record] {
        try recordFileNames().map { name in
            DecisionIndex.Record(
                fileName: name, heading: String(try recordText(name).prefix { $0 != "\n" }))
        }
    }

    // A miniature folder of two records and its correct index.
    static let planted = [
        DecisionIndex.Record(fileName: "0001-first.md", heading: "# 0001 — The first choice"),
        DecisionIndex.Record(fileName: "0002-second.md", heading: "# 0002 — The `second` choice"),
    ]
    static let plantedRows = [
        "| [0001](0001-first.md) | The first choice | amended by 0002 |",
        "| [0002](0002-second.md) | The `second` choice | accepted |",
    ]

    static func plantedReadme(_ rows: [String]) -> String {
        (["# Decisions", "", "| record | title | status |", "|---|---|---|"] + rows).joined(separator: "\n") + "\n"
    }

    @Test("the index lists every record once, with its heading's title and a status citing real records")
    func indexMatchesTheRecords() throws {
        let records = try Self.records()
        #expect(records.count > 100)
        let readme = try DocsTests.read(DecisionIndex.readmePath)
        let problems = DecisionIndex.violations(readme: readme, records: records)
        #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.joined(separator: "\n"))")
    }

    @Test("every record the index marks amended or superseded says so in a line of its own")
    func amendedRecordsSaySo() throws {
        var texts: [String: String] = [:]
        for name in try Self.recordFileNames() { texts[name] = try Self.recordText(name) }
        let problems = DecisionIndex.unmarkedRecords(
            readme: try DocsTests.read(DecisionIndex.readmePath), recordTexts: texts)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("an index that matches its records has nothing to report")
    func plantedIndexAgrees() {
        #expect(DecisionIndex.violations(readme: Self.plantedReadme(Self.plantedRows), records: Self.planted).isEmpty)
    }

    @Test("a record without a row is reported with the row to add and who adds it")
    func missingRowCaught() throws {
        let problems = DecisionIndex.violations(
            readme: Self.plantedReadme([Self.plantedRows[0]]), records: Self.planted)
        let problem = try #require(problems.only)
        #expect(problem.contains("docs/decisions/0002-second.md has no row"))
        #expect(problem.contains("when they are merged, by whoever merges them"))
        #expect(problem.hasSuffix("| [0002](0002-second.md) | The `second` choice | accepted |"))
    }

    @Test("a row naming a file that does not exist is reported")
    func ghostRowCaught() throws {
        let ghost = "| [0003](0003-gone.md) | Gone | accepted |"
        let problems = DecisionIndex.violations(
            readme: Self.plantedReadme(Self.plantedRows + [ghost]), records: Self.planted)
        let problem = try #require(problems.only)
        #expect(problem.contains("row for 0003-gone.md, which is not a file in docs/decisions"))
    }

    @Test("a title that differs from the record's heading is reported")
    func wrongTitleCaught() throws {
        let rows = [Self.plantedRows[0], "| [0002](0002-second.md) | The second choice | accepted |"]
        let problems = DecisionIndex.violations(readme: Self.plantedReadme(rows), records: Self.planted)
        let problem = try #require(problems.only)
        #expect(problem.contains("the title of 0002-second.md is \"The second choice\""))
        #expect(problem.contains("heading says \"The `second` choice\""))
    }

    @Test("a status citing a record that does not exist is reported")
    func danglingStatusCaught() throws {
        let rows = ["| [0001](0001-first.md) | The first choice | superseded by 0002, 0009 |", Self.plantedRows[1]]
        let problems = DecisionIndex.violations(readme: Self.plantedReadme(rows), records: Self.planted)
        let problem = try #require(problems.only)
        #expect(problem.contains("the status of 0001-first.md cites 0009, and docs/decisions has no record 0009"))
    }

    @Test("a status outside accepted, amended by and superseded by is reported")
    func unknownStatusCaught() throws {
        let rows = [Self.plantedRows[0], "| [0002](0002-second.md) | The `second` choice | replaced |"]
        let problem = try #require(
            DecisionIndex.violations(readme: Self.plantedReadme(rows), records: Self.planted).only)
        #expect(problem.contains("the status of 0002-second.md is \"replaced\""))
    }

    @Test("a record marked amended without a line naming its amender is reported")
    func unmarkedAmendmentCaught() throws {
        let readme = Self.plantedReadme(Self.plantedRows)
        let marked = "# 0001 — The first choice\n\n**Amended by 0002:** the second changed part.\n\nText.\n"
        let unmarked = "# 0001 — The first choice\n\nText that mentions 0002 in passing.\n"
        #expect(DecisionIndex.unmarkedRecords(readme: readme, recordTexts: ["0001-first.md": marked]).isEmpty)
        let problem = try #require(
            DecisionIndex.unmarkedRecords(readme: readme, recordTexts: ["0001-first.md": unmarked]).only)
        #expect(problem.contains("docs/decisions/0001-first.md is amended by 0002 in the index"))
    }
}

extension Array {
    /// The one element, or nil when there are none or several.
    fileprivate var only: Element? { count == 1 ? first : nil }
}

import Foundation
import Glibc
import PushKeyAttestation
import PushTestSupport
import Testing

@Suite("Key Attestation status list (docs/protocol.md §5a step 3, §4.2a)", .testBodyThreads)
struct StatusListTests {
    /// The format Google serves at android.googleapis.com/attestation/status.
    static let googleShaped = #"""
        {
          "entries": {
            "2c8cdddfd5e03bfc": {"status": "REVOKED", "expires": "2020-11-13", "reason": "KEY_COMPROMISE",
              "comment": "Key stored on unsecure system"},
            "C8966FCB2FBB0D7A": {"status": "SUSPENDED", "reason": "SOFTWARE_FLAW"},
            "00ab": {"status": "SOMETHING_NEW"}
          },
          "generated": "2026-12-01"
        }
        """#

    @Test("every entry is listed whatever its status, keys normalised to lowercase hex without leading zeros")
    func entries() throws {
        let list = try KeyAttestationStatusList(json: Array(Self.googleShaped.utf8), fetchedAt: 1_000)
        #expect(list.listedSerials == ["2c8cdddfd5e03bfc", "c8966fcb2fbb0d7a", "ab"])
        #expect(list.isListed(serialNumberHex: "ab"))
        #expect(!list.isListed(serialNumberHex: "1"))
        #expect(list.fetchedAt == 1_000)
    }

    @Test(
        "a list that does not parse is refused whole",
        arguments: [
            "", "[]", #"{"entries":[]}"#, #"{"other":{}}"#, #"{"entries":{"xyz":{"status":"REVOKED"}}}"#,
            #"{"entries":{"ab":"REVOKED"}}"#, #"{"entries":{"":{}}}"#,
            #"{"entries":{"ab":{},"ab":{}}}"#, #"{"entries":{}} trailing"#,
        ])
    func malformed(json: String) {
        #expect(throws: KeyAttestationError(.malformed)) {
            try KeyAttestationStatusList(json: Array(json.utf8), fetchedAt: 0)
        }
    }

    @Test("more than 4 MiB is refused, from memory and from a file")
    func tooLarge() throws {
        let padding = String(repeating: " ", count: KeyAttestationStatusList.maximumByteCount)
        let json = Array((#"{"entries":{}}"# + padding).utf8)
        #expect(throws: KeyAttestationError(.tooLarge)) {
            try KeyAttestationStatusList(json: json, fetchedAt: 0)
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("status-\(UUID().uuidString).json")
        try Data(json).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: KeyAttestationError(.tooLarge)) {
            try KeyAttestationStatusList.read(fromFile: file.path, at: 0)
        }
    }

    @Test("a file's list dates from the file's modification time, not its read; a missing file is unreadable")
    func file() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("status-\(UUID().uuidString).json")
        try Data(Self.googleShaped.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try Self.setModificationTime(of: file.path, to: 1_800_000_000)
        let list = try KeyAttestationStatusList.read(fromFile: file.path, at: 1_800_003_600)
        #expect(list.fetchedAt == 1_800_000_000)
        #expect(list.listedSerials.count == 3)
        // A modification time ahead of the clock counts as the read time.
        #expect(try KeyAttestationStatusList.read(fromFile: file.path, at: 1_700_000_000).fetchedAt == 1_700_000_000)
        #expect(throws: KeyAttestationError(.unreadable)) {
            try KeyAttestationStatusList.read(fromFile: file.path + ".missing", at: 0)
        }
    }

    @Test("a mirror file last written 25 hours ago is stale however recently it is read; one written now is not")
    func staleMirrorFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("status-\(UUID().uuidString).json")
        try Data(#"{"entries":{}}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let now = Int64(time(nil))
        #expect(try KeyAttestationStatusList.read(fromFile: file.path, at: now).usable(at: now).listedSerials == [])
        try Self.setModificationTime(of: file.path, to: now - 25 * 3600)
        let list = try KeyAttestationStatusList.read(fromFile: file.path, at: now)
        #expect(list.ageSeconds(at: now) == 25 * 3600)
        #expect(throws: KeyAttestationError(.stale)) { try list.usable(at: now) }
    }

    /// Sets the file's access and modification times (utimes(2)).
    static func setModificationTime(of path: String, to seconds: Int64) throws {
        var times = [timeval(tv_sec: Int(seconds), tv_usec: 0), timeval(tv_sec: Int(seconds), tv_usec: 0)]
        #expect(utimes(path, &times) == 0, "utimes: errno \(errno)")
    }

    @Test("a list is usable for 24 hours after its fetch and stale after that")
    func freshness() throws {
        let list = try KeyAttestationStatusList(json: Array(#"{"entries":{}}"#.utf8), fetchedAt: 1_000_000)
        #expect(try list.usable(at: 1_000_000 + 86_400) == list)
        #expect(list.ageSeconds(at: 1_000_000 + 86_400) == 86_400)
        #expect(throws: KeyAttestationError(.stale)) { try list.usable(at: 1_000_000 + 86_401) }
        // A fetch time ahead of the clock counts as fresh, not as a negative age.
        #expect(list.ageSeconds(at: 999_000) == 0)
    }
}

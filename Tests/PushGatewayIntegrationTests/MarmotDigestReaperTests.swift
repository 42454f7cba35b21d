import PushPostgres
import PushTestSupport
import Testing

@testable import PushGateway

@Suite(
    "Reaper: Marmot trigger digests past their 10-minute retention (docs/protocol.md §10, §13)", .tags(.postgres),
    .testBodyThreads)
struct MarmotDigestReaperTests {
    @Test("a pass deletes the digests past expires_at, keeps live ones, and counts them under their table")
    func deletesExpiredDigests() throws {
        try TemporaryDatabase.with { database in
            let fixture = try ReaperFixture(database)
            for (fill, offset) in [(1, "-1 minute"), (2, "-1 second"), (3, "9 minutes")] {
                try fixture.admin.query(
                    "INSERT INTO marmot_trigger_digests VALUES ($1, now() + $2::interval)",
                    [.bytes([UInt8](repeating: UInt8(fill), count: 32)), .text(offset)])
            }
            let reaper = fixture.reaper()
            #expect(reaper.runOnce() == .ok)
            #expect(try fixture.count("SELECT count(*) FROM marmot_trigger_digests") == 1)
            #expect(reaper.metrics.reaperDeletedRows.count(.marmotTriggerDigests) == 2)
        }
    }
}

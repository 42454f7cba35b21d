import Foundation
import PushSystem
import PushTestSupport
import Testing

@testable import PushGateway

@Suite(
    "serve runs the reaper and drains on SIGTERM even when started with it blocked", .tags(.postgres, .process, .slow),
    .testBodyThreads)
struct ReaperServeTests {
    /// The `push-gateway` executable built next to the test bundle.
    static func executable() throws -> URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("push-gateway")
        let repository = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidates = [beside, repository.appendingPathComponent(".build/debug/push-gateway")]
        return try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) })
    }

    @Test("the serve process reaps an expired row at PUSH_GATEWAY_REAPER_INTERVAL_SECONDS and exits 0 on SIGTERM")
    func serveReapsAndStops() throws {
        try TemporaryDatabase.with { database in
            let fixture = try ReaperFixture(database)
            try fixture.replayRows(expiresIn: "-1 hour")
            let environment = try ConfigurationTestEnvironment()
                .with("DATABASE_URL", database.url(for: fixture.role))
                .with("PUSH_GATEWAY_REAPER_INTERVAL_SECONDS", "1")
            // Foundation's Process passes on the test thread's signal mask, which blocks SIGTERM;
            // serve unblocks its shutdown signals itself, so SIGTERM below must still drain it.
            let gateway = try ServeProcess(environment: environment.variables)
            let privatePort = gateway.privatePort

            #expect(try eventually(within: 15) { try fixture.count("SELECT count(*) FROM consumed_challenges") == 0 })
            let scrape = {
                let client = try HTTPTestClient(port: privatePort)
                try client.send("GET /metrics HTTP/1.1\r\nHost: gateway\r\n\r\n")
                return try ScrapedMetrics(client.readResponse().bodyText)
            }
            // The pass counts itself once all its tables are done, a moment after the row's
            // deletion committed.
            let runs = #"push_gateway_reaper_runs_total{result="ok"}"#
            #expect(try eventually(within: 10) { (try scrape().samples[runs] ?? 0) >= 1 })
            let scraped = try scrape()
            #expect(scraped.samples[#"push_gateway_reaper_deleted_rows_total{table="consumed_challenges"}"#] == 1)

            #expect(gateway.stop() == 0)
        }
    }
}

import Foundation
import PushPostgres
import PushSystem
import PushTestSupport
import Testing

@testable import PushGateway

/// A `TestGateway` whose log the test reads.
private final class ProbedGateway {
    let gateway: TestGateway
    let log = CapturedLog()

    var server: GatewayServer { gateway.server }

    init(databaseURL: String) throws {
        gateway = try TestGateway(database: .url(databaseURL), logger: log.logger)
    }

    func readiness() throws -> HTTPTestResponse { try gateway.get("/_readiness") }

    /// Probes twice (the second must log nothing new) and returns the answer.
    func probe() throws -> HTTPTestResponse {
        let first = try readiness()
        let second = try readiness()
        #expect(first.status == second.status && first.bodyText == second.bodyText)
        return first
    }

    var changeLines: [String] { log.lines("not ready") + log.lines("ready") }
}

@Suite("Readiness says why (docs/protocol.md §9)", .serialized, .tags(.postgres), .testBodyThreads)
struct ReadinessReasonTests {
    static func notReady(_ reason: String) -> String { #"{"error":"not_ready","reason":"\#(reason)"}"# }

    @Test("the owner role answers 503 privileges, and logs that once")
    func ownerRole() throws {
        try TemporaryDatabase.with { database in
            #expect(MigrateTestSupport.migrate(database).exitCode == 0)
            let gateway = try ProbedGateway(databaseURL: database.url)
            let response = try gateway.probe()
            #expect(response.status == 503)
            #expect(response.bodyText == Self.notReady("privileges"))
            let lines = gateway.log.lines("not ready")
            #expect(lines.count == 1)
            #expect(lines.first?.contains(#""reason":"privileges""#) == true)
            #expect(lines.first?.contains(#""level":"warning""#) == true)
        }
    }

    @Test("a database that does not answer is 503 database")
    func databaseDown() throws {
        let gateway = try ProbedGateway(databaseURL: "postgresql://nobody@127.0.0.1:1/none")
        let response = try gateway.probe()
        #expect(response.status == 503 && response.bodyText == Self.notReady("database"))
        #expect(gateway.log.lines("not ready").count == 1)
        #expect(!gateway.log.text.contains("nobody@"), "the log never holds the database URL")
    }

    @Test("a database without the schema is 503 schema")
    func schemaMissing() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            let gateway = try ProbedGateway(databaseURL: database.url(for: role))
            let response = try gateway.probe()
            #expect(response.status == 503 && response.bodyText == Self.notReady("schema"))
            #expect(gateway.log.lines("not ready").first?.contains(#""reason":"schema""#) == true)
        }
    }

    @Test("ready, then draining: one log line at each change and the metric follows")
    func readyThenDraining() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            #expect(MigrateTestSupport.migrate(database, ["--runtime-role", role.name]).exitCode == 0)
            let gateway = try ProbedGateway(databaseURL: database.url(for: role))
            let ready = try gateway.probe()
            #expect(ready.status == 200 && ready.bodyText == #"{"status":"ready"}"#)
            #expect(gateway.log.lines("ready").count == 1)
            gateway.server.application.beginDrain()
            let draining = try gateway.probe()
            #expect(draining.status == 503 && draining.bodyText == Self.notReady("draining"))
            #expect(gateway.changeLines.count == 2)
            let scraped = try ScrapedMetrics(gateway.server.application.metrics.render())
            #expect(scraped.samples[#"push_gateway_readiness{state="draining"}"#] == 1)
            #expect(scraped.samples[#"push_gateway_readiness{state="ready"}"#] == 0)
        }
    }
}

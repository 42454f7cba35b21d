import Foundation
import PushSystem
import PushTestSupport
import Testing

@testable import PushGateway
@testable import PushPostgres

/// docs/decisions/0343 (the second review's finding 7): the gateway reads the overcommit mode at
/// start — here from a file the test writes, in place of `/proc/sys/vm/overcommit_memory` — and
/// under strict overcommit calls its functions as statements, mapping no 2 GiB buffer.
@Suite(
    "The admission's call form follows the host's overcommit mode, and deliveries work in either", .tags(.postgres),
    .testBodyThreads)
struct FunctionCallFormLiveTests {
    /// A file holding `text`, removed when the returned directory is.
    static func modeFile(_ text: String) throws -> (path: String, directory: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("overcommit-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("overcommit_memory").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return (path, directory)
    }

    /// Starts a gateway reading `mode` as the overcommit mode, sends one delivery and one batch,
    /// and returns its start-up lines about the form and the state of the session that admitted them.
    static func deliver(
        underMode mode: String
    ) throws -> (lines: [String], form: FunctionCallForm, buffer: FunctionResultBufferState) {
        let file = try modeFile(mode)
        defer { try? FileManager.default.removeItem(at: file.directory) }
        let log = CapturedLog()
        let gateway = try DeliveryTestGateway(logger: log.logger, overcommitModePath: file.path)
        let scenario = try gateway.enroll()
        #expect(try gateway.deliver(scenario).status == 200)
        expectBatchResults(
            try gateway.client.deliverBatch([try BatchTestItem(scenario)], signer: scenario.relay),
            [BatchResult.accepted])
        #expect(gateway.sender.callCount == 2)
        #expect(try DeliveryFixtures.count(gateway.admin, table: "delivery_reservations") == 2)
        // One request after another: the pool opened one session and it made both calls.
        let pool = gateway.server.application.pool
        #expect(pool.statistics.open == 1)
        let connection = try pool.acquire()
        defer { pool.release(connection) }
        return (log.lines("database function calls"), connection.functionCallForm, connection.functionResultBuffer)
    }

    @Test(
        "under overcommit mode 2 the admission is a statement: no buffer is mapped, one line says why, deliveries are accepted"
    )
    func strictOvercommit() throws {
        let (lines, form, buffer) = try Self.deliver(underMode: "2\n")
        #expect(lines.count == 1)
        #expect(lines.first?.contains(#""form":"statement""#) == true)
        #expect(lines.first?.contains(#""overcommit_mode":"2""#) == true)
        #expect(lines.first?.contains("vm.overcommit_memory is 2") == true)
        #expect(form == .statement)
        guard case .refused = buffer else {
            Issue.record("the session mapped a result buffer under strict overcommit")
            return
        }
    }

    @Test(
        "under overcommit mode 0 (and this host's RLIMIT_AS) the admission is the FunctionCall message into its buffer")
    func heuristicOvercommit() throws {
        let expected = FunctionCallFormChoice.choose(
            for: AddressSpaceFacts(overcommitMode: 0, addressSpaceLimit: AddressSpaceFacts.current().addressSpaceLimit),
            sessions: 16
        ).form
        let (lines, form, buffer) = try Self.deliver(underMode: "0\n")
        #expect(lines.count == 1)
        #expect(lines.first?.contains(#""overcommit_mode":"0""#) == true)
        #expect(form == expected)
        if expected == .message {
            guard case .mapped = buffer else {
                Issue.record("the session did not map its result buffer")
                return
            }
        }
    }
}

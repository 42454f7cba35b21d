import Foundation
import MarmotIngress
import PushCrypto
import PushDelivery
import PushMarmot
import PushNostr
import PushPostgres
import PushSystem
import PushTestSupport
import Synchronization

/// A push provider for the Marmot tests (never in Sources): records every wake it is given and
/// answers with the outcome `answer` picks for it (accepted by default). The e2e tests switch to
/// the real APNs and FCM providers against their mocks once those implement `PushProvider`.
final class RecordingPushProvider: PushProvider {
    let service: PushService
    private let answer: @Sendable (PushWake, Int) -> PushOutcome
    private let recorded = Mutex<[PushWake]>([])

    init(_ service: PushService, answer: @escaping @Sendable (PushWake, Int) -> PushOutcome = { _, _ in .accepted }) {
        self.service = service
        self.answer = answer
    }

    var wakes: [PushWake] { recorded.withLock { $0 } }

    func submit(_ wake: PushWake, completion: @escaping @Sendable (PushReport) -> Void) {
        let attempt = recorded.withLock { wakes in
            wakes.append(wake)
            return wakes.filter { $0.deviceToken == wake.deviceToken }.count
        }
        completion(.notSent(answer(wake, attempt), service: service))
    }

    func shutdown() {}
}

/// The ingress of docs/protocol.md §13 against a real PostgreSQL (migration 0008's table), with
/// recording providers for both platforms and its own metrics.
final class MarmotIngressHarness {
    static let apnsProfile = "marmot-ios"
    static let fcmProfile = "marmot-android"
    static let now: Int64 = 1_800_000_000

    let database: MigratedTestDatabase
    let pool: PostgresPool
    let apns: RecordingPushProvider
    let fcm: RecordingPushProvider
    let metrics = MarmotMetrics()
    let logger = TestLogs.logger()
    let retryLoop: EventLoop

    init(
        apns: RecordingPushProvider = RecordingPushProvider(.apns),
        fcm: RecordingPushProvider = RecordingPushProvider(.fcm)
    ) throws {
        database = try MigratedTestDatabase()
        pool = PostgresPool(configuration: database.database.configuration(role: database.role))
        self.apns = apns
        self.fcm = fcm
        retryLoop = try EventLoop()
    }

    deinit { retryLoop.shutdown() }

    var providers: MarmotProviderMap {
        [.apns: (apns, Self.apnsProfile), .fcm: (fcm, Self.fcmProfile)]
    }

    /// Retries on this harness's loop, `retryDelays` shortened by the caller when it wants.
    var scheduler: MarmotRetryScheduler {
        let loop = retryLoop
        return { delay, body in loop.execute { loop.schedule(after: delay) { body() } } }
    }

    func ingress(
        settings: MarmotIngressSettings = MarmotIngressSettings(), providers: MarmotProviderMap? = nil,
        scheduler: MarmotRetryScheduler? = nil
    ) throws -> MarmotIngress {
        try MarmotIngress(
            serverKey: MarmotFixture.server, providers: providers ?? self.providers, settings: settings,
            digests: PostgresMarmotDigestClaims(pool: pool), metrics: metrics, logger: logger,
            unixTime: { Self.now }, scheduleRetry: scheduler ?? self.scheduler)
    }

    /// The gift wrap of `chunks` as a client builds it.
    static func trigger(_ chunks: [[UInt8]]) -> NostrEvent {
        let author = MarmotFixture.author()
        return MarmotTestEncoder.giftWrap(
            MarmotTestEncoder.rumor(chunks: chunks, author: author), author: author,
            server: MarmotFixture.server.publicKey)
    }

    /// Rows of the digest table.
    func digestCount() throws -> Int {
        try pool.withConnection { connection in
            let result = try connection.query("SELECT count(*) FROM marmot_trigger_digests")
            return Int(try result.int64(row: 0, column: 0) ?? -1)
        }
    }
}

import Foundation
import PushCrypto
import PushDelivery
import PushMarmot
import PushNostr
import PushPostgres
import PushSystem
import PushTestSupport
import Synchronization

@testable import MarmotIngress

/// A push provider for the Marmot tests (never in Sources): records every wake it is given and
/// answers with the outcome `answer` picks for it (accepted by default). The e2e tests switch to
/// the real APNs and FCM providers against their mocks once those implement `PushProvider`.
final class RecordingPushProvider: PushProvider {
    let service: PushService
    private let answer: @Sendable (PushWake, Int) -> PushOutcome
    private let recorded = Mutex<[PushWake]>([])
    private let recordedThreads = Mutex<[String]>([])

    init(_ service: PushService, answer: @escaping @Sendable (PushWake, Int) -> PushOutcome = { _, _ in .accepted }) {
        self.service = service
        self.answer = answer
    }

    var wakes: [PushWake] { recorded.withLock { $0 } }
    /// The name of the thread each wake was submitted on, in order.
    var submittingThreads: [String] { recordedThreads.withLock { $0 } }

    func submit(_ wake: PushWake, completion: @escaping @Sendable (PushReport) -> Void) {
        recordedThreads.withLock { $0.append(currentThreadName()) }
        let attempt = recorded.withLock { wakes in
            wakes.append(wake)
            return wakes.filter { $0.deviceToken == wake.deviceToken }.count
        }
        completion(.notSent(answer(wake, attempt), service: service))
    }

    func shutdown() {}
}

/// The wall clock and the monotonic clock of the harness's ingresses: both stand still until a
/// test advances them, so buckets refill and the seen set forgets only when a test says so.
final class MarmotTestClock: Sendable {
    private let times: Mutex<(unix: Int64, monotonic: Double)>

    init(unix: Int64) { times = Mutex((unix, 1_000)) }

    var unix: Int64 { times.withLock { $0.unix } }
    var monotonic: Double { times.withLock { $0.monotonic } }

    /// Moves both clocks forward by `seconds`.
    func advance(_ seconds: Int64) {
        times.withLock {
            $0.unix += seconds
            $0.monotonic += Double(seconds)
        }
    }
}

/// The ingress of docs/protocol.md §13 against a real PostgreSQL (migration 0008's table), with
/// recording providers for both platforms, its own metrics and a clock of its own.
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
    let clock = MarmotTestClock(unix: now)
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

    /// An ingress (a replica) on this harness's database, metrics and clock, receiving from
    /// `relayCount` relays.
    func ingress(
        settings: MarmotIngressSettings = MarmotIngressSettings(), relayCount: Int = 1,
        providers: MarmotProviderMap? = nil, scheduler: MarmotRetryScheduler? = nil
    ) throws -> MarmotIngress {
        let clock = self.clock
        return try MarmotIngress(
            serverKey: MarmotFixture.server, relayCount: relayCount, providers: providers ?? self.providers,
            settings: settings, digests: PostgresMarmotDigestClaims(pool: pool), metrics: metrics, logger: logger,
            unixTime: { clock.unix }, monotonicSeconds: { clock.monotonic }, scheduleRetry: scheduler ?? self.scheduler)
    }

    /// The gift wrap of `chunks` as a client builds it at `createdAt` (the wrap's own `created_at`
    /// is two hours earlier).
    static func trigger(_ chunks: [[UInt8]], createdAt: Int64 = now) -> NostrEvent {
        let author = MarmotFixture.author()
        return MarmotTestEncoder.giftWrap(
            MarmotTestEncoder.rumor(chunks: chunks, author: author, createdAt: createdAt), author: author,
            server: MarmotFixture.server.publicKey)
    }

    /// What the reaper does once a digest's 10 minutes have passed (docs/protocol.md §10).
    func reapDigests() throws {
        try pool.withConnection { connection in
            try connection.withTransaction(isolation: .readCommitted) { transaction in
                _ = try transaction.query("DELETE FROM marmot_trigger_digests")
            }
        }
    }

    /// Rows of the digest table.
    func digestCount() throws -> Int {
        try pool.withConnection { connection in
            let result = try connection.query("SELECT count(*) FROM marmot_trigger_digests")
            return Int(try result.int64(row: 0, column: 0) ?? -1)
        }
    }
}

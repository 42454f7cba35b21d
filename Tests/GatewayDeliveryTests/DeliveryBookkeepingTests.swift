import GatewayAPI
import Glibc
import PushDelivery
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayDelivery

/// Where a result completes and how failed bookkeeping is retried (docs/decisions/0271, 0750): a
/// result with database work completes through `DeliveryContext.resume`, one without on the
/// thread its report arrived on; a failed write is retried on the scheduler's timers, never by
/// sleeping a thread, at most three attempts, then logged.
@Suite("Delivery bookkeeping without a database: the completing thread and retries on the scheduler", .testBodyThreads)
struct DeliveryBookkeepingTests {
    /// Answers the held wake of `delivery` with `outcome` from a thread of its own; returns that thread.
    static func report(
        _ outcome: PushOutcome, for delivery: DeliveryRequest, through harness: PipelineHarness
    ) throws -> pthread_t {
        let reporter = Mutex<pthread_t?>(nil)
        let provider = harness.provider
        let requestID = delivery.requestID
        try PosixThread.spawn {
            reporter.withLock { $0 = pthread_self() }
            provider.answer(requestID, with: outcome)
        }.join()
        return try #require(reporter.withLock { $0 })
    }

    @Test("a result without database work completes on the thread its report arrived on, without a worker")
    func completesOnTheReportingThread() throws {
        for outcome in [PushOutcome.accepted, .permanentRequestFault] {
            let harness = try PipelineHarness(holdsReports: true)
            let delivery = try harness.delivery()
            let answer = harness.deliver(delivery)
            #expect(answer.value == nil, "\(outcome): no answer before the report")
            let reporter = try Self.report(outcome, for: delivery, through: harness)
            #expect(answer.value != nil, "\(outcome)")
            #expect(answer.thread.map { pthread_equal($0, reporter) != 0 } == true, "\(outcome)")
            #expect(harness.workers.handOvers == 0, "\(outcome)")
        }
    }

    @Test("a result with bookkeeping completes through context.resume, after the bookkeeping, on the worker")
    func completesThroughResume() throws {
        for outcome in [PushOutcome.endpointDead(invalidAtSeconds: nil), .retry(retryAfterSeconds: nil)] {
            let harness = try PipelineHarness(holdsReports: true)
            let delivery = try harness.delivery()
            let answer = harness.deliver(delivery)
            _ = try Self.report(outcome, for: delivery, through: harness)
            // The report's thread did no database work and gave no answer: it handed both over.
            #expect(harness.workers.handOvers == 1, "\(outcome)")
            #expect(answer.value == nil, "\(outcome)")
            #expect(harness.admissions.releaseCalls + harness.admissions.markDeadCalls == 0, "\(outcome)")

            harness.workers.runQueued()
            #expect(answer.value != nil, "\(outcome)")
            #expect(answer.thread.map { pthread_equal($0, pthread_self()) != 0 } == true, "\(outcome)")
            #expect(harness.admissions.releaseCalls + harness.admissions.markDeadCalls == 1, "\(outcome)")
        }
    }

    @Test("a release failing twice is retried on the scheduler 200 ms apart and succeeds on the third of three calls")
    func releaseRetriedOnTheScheduler() throws {
        let harness = try PipelineHarness([.retry(retryAfterSeconds: 5)])
        harness.admissions.failNext(releases: 2)
        let delivery = try harness.delivery()
        let answer = harness.deliver(delivery)
        harness.workers.runQueued()
        // The first attempt failed; the worker returned with the retry on a timer, not asleep.
        #expect(harness.admissions.releaseCalls == 1)
        #expect(harness.scheduler.delays == [.milliseconds(200)])
        #expect(answer.value == nil)

        harness.scheduler.advance(by: .milliseconds(199))
        #expect(harness.admissions.releaseCalls == 1)
        harness.scheduler.advance(by: .milliseconds(1))
        // The timer hands the retry to a worker; the timer's thread does no database work.
        #expect(harness.admissions.releaseCalls == 1)
        #expect(harness.workers.queuedCount == 1)
        harness.workers.runQueued()
        #expect(harness.admissions.releaseCalls == 2)
        #expect(harness.scheduler.delays == [.milliseconds(200), .milliseconds(200)])

        harness.scheduler.advance(by: .milliseconds(200))
        harness.workers.runQueued()
        #expect(harness.admissions.releaseCalls == 3)
        #expect(answer.value == .retry(retryAfterSeconds: 5))
        #expect(!harness.isReserved(delivery))
        #expect(harness.scheduler.pending == 0)
        #expect(harness.logs.lines(saying: "delivery bookkeeping failed").isEmpty)
    }

    @Test("a dead mark failing twice is retried on the scheduler and lands on the third call")
    func deadMarkRetriedOnTheScheduler() throws {
        let harness = try PipelineHarness([.endpointDead(invalidAtSeconds: 1_700_000_000)])
        harness.admissions.failNext(deadMarks: 2)
        let answer = harness.deliver(try harness.delivery())
        harness.workers.runQueued()
        for _ in 0..<2 {
            #expect(answer.value == nil)
            harness.scheduler.advance(by: .milliseconds(200))
            harness.workers.runQueued()
        }
        #expect(harness.admissions.markDeadCalls == 3)
        #expect(harness.admissions.deadMarks.count == 1)
        #expect(
            answer.value == .invalidEndpoint(generation: PipelineHarness.generation, invalidAtSeconds: 1_700_000_000))
    }

    @Test("a release failing three times is logged after the third call and the result is still answered")
    func releaseGivenUpAfterThreeAttempts() throws {
        let harness = try PipelineHarness([.configurationFault(.credentialsRejected)])
        harness.admissions.failNext(releases: 3)
        let delivery = try harness.delivery()
        let answer = harness.deliver(delivery)
        harness.workers.runQueued()
        harness.scheduler.advance(by: .milliseconds(200))
        harness.workers.runQueued()
        #expect(harness.logs.lines(saying: "delivery bookkeeping failed").isEmpty)
        harness.scheduler.advance(by: .milliseconds(200))
        harness.workers.runQueued()

        #expect(harness.admissions.releaseCalls == 3)
        #expect(harness.scheduler.delays.count == 2)
        #expect(harness.scheduler.pending == 0)
        #expect(answer.value == .configurationFault)
        // The reservation then lives until expires_at (docs/protocol.md §4.7).
        #expect(harness.isReserved(delivery))
        let logged = harness.logs.lines(saying: "delivery bookkeeping failed")
        #expect(logged.count == 1)
        #expect(logged.first?.contains(#""step":"release the request reservation""#) == true)
        #expect(logged.first?.contains(#""error":"the database is unreachable""#) == true)
    }

    @Test("a scheduler that refuses the retry (shut down): logged at once, the result still answered")
    func refusedRetryIsLogged() throws {
        let harness = try PipelineHarness([.retry(retryAfterSeconds: nil)])
        harness.admissions.failNext(releases: 1)
        harness.scheduler.refuse()
        let answer = harness.deliver(try harness.delivery())
        harness.workers.runQueued()
        #expect(answer.value == .retry(retryAfterSeconds: nil))
        #expect(harness.admissions.releaseCalls == 1)
        #expect(harness.logs.lines(saying: "delivery bookkeeping failed").count == 1)
    }
}

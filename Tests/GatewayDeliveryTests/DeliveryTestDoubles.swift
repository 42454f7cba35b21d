import GatewayConfiguration
import GatewayCredentials
import PushDelivery
import PushMetrics
import PushNostr
import PushSystem
import Synchronization

@testable import GatewayDelivery

/// A storage failure of the in-memory admissions.
struct StorageFailure: Error, CustomStringConvertible {
    var description: String { "the database is unreachable" }
}

/// The admission transaction and the bookkeeping in memory: an admitted delivery's request id is
/// reserved, a release removes it, a dead mark is recorded; each decision comes from `decide`, and
/// the next bookkeeping writes can be made to fail.
final class InMemoryAdmissions: DeliveryAdmissions {
    struct Reservation: Hashable {
        let relay: [UInt8]
        let requestID: CanonicalUUID
    }

    struct DeadMark: Equatable {
        let installationHandle: String
        let epoch: Int64
        let invalidAtSeconds: Int64?
    }

    private struct State {
        var reservations: Set<Reservation> = []
        var deadMarks: [DeadMark] = []
        var admissions: [AdmissionRequest] = []
        var batchAdmissions: [BatchAdmissionRequest] = []
        var releaseCalls = 0
        var markDeadCalls = 0
        var failingReleases = 0
        var failingDeadMarks = 0
        var admissionFails = false
    }

    private let state = Mutex(State())
    private let decide: @Sendable (AdmissionItem) -> AdmissionDecision
    private let duringAdmission: @Sendable () -> Void

    /// - Parameters:
    ///   - decide: each item's decision.
    ///   - duringAdmission: runs inside each admission transaction (a test moves its clock there).
    init(
        decide: @escaping @Sendable (AdmissionItem) -> AdmissionDecision,
        duringAdmission: @escaping @Sendable () -> Void = {}
    ) {
        self.decide = decide
        self.duringAdmission = duringAdmission
    }

    func admit(_ request: AdmissionRequest) throws -> AdmissionDecision {
        duringAdmission()
        return try state.withLock { state in
            state.admissions.append(request)
            if state.admissionFails { throw StorageFailure() }
            return Self.decided(decide(request.item), request.item, relay: request.authorization, &state)
        }
    }

    func admitBatch(_ request: BatchAdmissionRequest) throws -> [AdmissionDecision] {
        duringAdmission()
        return try state.withLock { state in
            state.batchAdmissions.append(request)
            if state.admissionFails { throw StorageFailure() }
            return request.items.map { Self.decided(decide($0), $0, relay: request.authorization, &state) }
        }
    }

    private static func decided(
        _ decision: AdmissionDecision, _ item: AdmissionItem, relay: NIP98Authorization, _ state: inout State
    ) -> AdmissionDecision {
        if decision.isAdmitted {
            state.reservations.insert(
                Reservation(relay: relay.relayPublicKey.bytes, requestID: item.delivery.requestID))
        }
        return decision
    }

    func releaseReservation(relayPublicKey: [UInt8], requestID: CanonicalUUID) throws {
        try state.withLock { state in
            state.releaseCalls += 1
            if state.failingReleases > 0 {
                state.failingReleases -= 1
                throw StorageFailure()
            }
            state.reservations.remove(Reservation(relay: relayPublicKey, requestID: requestID))
        }
    }

    func markEndpointDead(installationHandle: String, epoch: Int64, invalidAtSeconds: Int64?) throws {
        try state.withLock { state in
            state.markDeadCalls += 1
            if state.failingDeadMarks > 0 {
                state.failingDeadMarks -= 1
                throw StorageFailure()
            }
            state.deadMarks.append(
                DeadMark(installationHandle: installationHandle, epoch: epoch, invalidAtSeconds: invalidAtSeconds))
        }
    }

    /// The next `releases` releases and `deadMarks` dead marks throw.
    func failNext(releases: Int = 0, deadMarks: Int = 0) {
        state.withLock { state in
            state.failingReleases = releases
            state.failingDeadMarks = deadMarks
        }
    }

    /// Every admission transaction throws from now on.
    func failAdmissions() { state.withLock { $0.admissionFails = true } }

    func isReserved(_ requestID: CanonicalUUID, relay: [UInt8]) -> Bool {
        state.withLock { $0.reservations.contains(Reservation(relay: relay, requestID: requestID)) }
    }

    var admissions: [AdmissionRequest] { state.withLock { $0.admissions } }
    var batchAdmissions: [BatchAdmissionRequest] { state.withLock { $0.batchAdmissions } }
    /// Single and batch admission transactions begun.
    var transactions: Int { state.withLock { $0.admissions.count + $0.batchAdmissions.count } }
    var deadMarks: [DeadMark] { state.withLock { $0.deadMarks } }
    var releaseCalls: Int { state.withLock { $0.releaseCalls } }
    var markDeadCalls: Int { state.withLock { $0.markDeadCalls } }
}

/// A push service without I/O: answers each wake with the next scripted outcome (then `accepted`)
/// on the submitting thread, or, when `holdsReports`, keeps the wake until the test answers it with
/// `answer(_:with:)` on a thread of its choosing, in any order.
final class ScriptedPushProvider: PushProvider {
    private struct State {
        var script: [PushOutcome]
        var wakes: [PushWake] = []
        var held: [(requestID: String?, completion: @Sendable (PushReport) -> Void)] = []
    }

    let service: PushService = .apns
    private let state: Mutex<State>
    private let holdsReports: Bool

    init(_ script: [PushOutcome] = [], holdsReports: Bool = false) {
        state = Mutex(State(script: script))
        self.holdsReports = holdsReports
    }

    func submit(_ wake: PushWake, completion: @escaping @Sendable (PushReport) -> Void) {
        let outcome = state.withLock { state -> PushOutcome? in
            state.wakes.append(wake)
            if holdsReports {
                state.held.append((wake.requestID, completion))
                return nil
            }
            return state.script.isEmpty ? .accepted : state.script.removeFirst()
        }
        if let outcome { completion(Self.report(outcome)) }
    }

    /// Reports `outcome` for the held wake of `requestID` on the calling thread.
    func answer(_ requestID: CanonicalUUID, with outcome: PushOutcome) {
        let completion = state.withLock { state in
            let index = state.held.firstIndex { $0.requestID == requestID.text }!
            return state.held.remove(at: index).completion
        }
        completion(Self.report(outcome))
    }

    func shutdown() {}

    /// What APNs answering `outcome` would report; no send duration of its own, so the pipeline
    /// times the attempt on its clock.
    static func report(_ outcome: PushOutcome) -> PushReport {
        let (requestOutcome, status, reason): (PushRequestOutcome, Int, String?) =
            switch outcome {
            case .accepted: (.accepted, 200, nil)
            case .endpointDead: (.invalidEndpoint, 410, "Unregistered")
            case .retry: (.transient, 503, "ServiceUnavailable")
            case .configurationFault: (.configurationFault, 403, "Forbidden")
            case .permanentRequestFault: (.rejected, 400, "BadTopic")
            }
        return PushReport(
            outcome: outcome, service: .apns, requestOutcome: requestOutcome, requests: 1, status: status,
            reason: reason, sendDuration: nil)
    }

    var wakes: [PushWake] { state.withLock { $0.wakes } }
    var heldCount: Int { state.withLock { $0.held.count } }
}

/// Time the test moves: a monotonic clock that stands still until `advance(by:)`, and a real-time
/// clock that moves with it, starting at `unixMillisecondsAtStart`.
final class VirtualClock: DeliveryClock {
    static let start = MonotonicInstant(nanoseconds: 5_000_000_000_000)
    static let unixMillisecondsAtStart: Int64 = 1_800_000_000_000

    private let current = Mutex(VirtualClock.start)

    func now() -> MonotonicInstant { current.withLock { $0 } }

    func unixMilliseconds(at instant: MonotonicInstant) -> Int64 {
        Self.unixMillisecondsAtStart + (Int64(instant.nanoseconds) - Int64(Self.start.nanoseconds)) / 1_000_000
    }

    /// The real-time clock now, in whole seconds: the gateway's `now` of a request.
    var unixSeconds: Int64 { unixMilliseconds(at: now()) / 1000 }

    func advance(by duration: Duration) {
        current.withLock { $0 = $0.advanced(by: duration) }
    }

    fileprivate func set(_ instant: MonotonicInstant) {
        current.withLock { $0 = max($0, instant) }
    }
}

/// Timers in virtual time: `advance(by:)` moves the clock and runs each timer that falls due, at
/// its due instant, in due order. Nothing runs on its own, and no thread ever waits.
final class VirtualScheduler: DeliveryScheduler {
    private struct Timer {
        let due: MonotonicInstant
        let work: @Sendable () -> Void
    }

    private struct State {
        var timers: [Timer] = []
        var delays: [Duration] = []
        var refuses = false
    }

    private let clock: VirtualClock
    private let state = Mutex(State())

    init(clock: VirtualClock) {
        self.clock = clock
    }

    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> Bool {
        let due = clock.now().advanced(by: delay)
        return state.withLock { state in
            guard !state.refuses else { return false }
            state.delays.append(delay)
            state.timers.append(Timer(due: due, work: work))
            return true
        }
    }

    /// From now on `schedule` refuses, as a scheduler that has shut down does.
    func refuse() { state.withLock { $0.refuses = true } }

    func advance(by duration: Duration) {
        let end = clock.now().advanced(by: duration)
        while let timer = state.withLock({ state -> Timer? in
            guard
                let index = state.timers.indices.filter({ state.timers[$0].due <= end })
                    .min(by: { state.timers[$0].due < state.timers[$1].due })
            else { return nil }
            return state.timers.remove(at: index)
        }) {
            clock.set(timer.due)
            timer.work()
        }
        clock.set(end)
    }

    /// Every delay asked for, in order.
    var delays: [Duration] { state.withLock { $0.delays } }
    var pending: Int { state.withLock { $0.timers.count } }
}

/// Stands in for the HTTP server's workers behind `DeliveryContext.resume`: work handed over waits
/// until the test runs it with `runQueued()`, so a test sees whether, and when, the pipeline went
/// through a worker.
final class ManualWorkers: Sendable {
    private struct State {
        var queued: [@Sendable () -> Void] = []
        var handOvers = 0
    }

    private let state = Mutex(State())

    var resume: @Sendable (@escaping @Sendable () -> Void) -> Void {
        { [self] work in
            self.state.withLock { state in
                state.queued.append(work)
                state.handOvers += 1
            }
        }
    }

    /// Runs the queued work on the calling thread, and whatever that work queues, until none is left.
    func runQueued() {
        while true {
            let batch = state.withLock { state in
                defer { state.queued.removeAll() }
                return state.queued
            }
            guard !batch.isEmpty else { return }
            for work in batch { work() }
        }
    }

    /// How many times work was handed to a worker.
    var handOvers: Int { state.withLock { $0.handOvers } }
    var queuedCount: Int { state.withLock { $0.queued.count } }
}

/// The log lines a `Logger` wrote.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    var logger: Logger {
        Logger(level: .debug) { [self] line in self.lines.withLock { $0.append(line) } }
    }

    /// Lines whose message is `message`.
    func lines(saying message: String) -> [String] {
        lines.withLock { $0.filter { $0.contains(#""msg":"\#(message)""#) } }
    }
}

/// The provider module of `ScriptedPushProvider`'s service for the pipeline's metrics and fault log:
/// its requests counted by outcome, its answers labelled by their reason.
struct ScriptedProviderModule: PushProviderModule {
    var service: PushService { .apns }
    var platform: AppProfile.Platform { .ios }
    var displayName: String { "Scripted" }
    var endpointSyntax: String { "any text" }

    func endpoint(_ text: String) -> [UInt8]? { Array(text.utf8) }

    func reasonLabel(_ report: PushReport) -> String? { report.status.map { _ in report.reason ?? "none" } }

    func makeMetrics(profileIDs: [String]) -> any PushProviderMetrics { ScriptedProviderMetrics() }

    func makeProvider(
        profiles: [AppProfile], configuration: GatewayConfiguration, runtime: Runtime
    ) throws(PushProviderStartError) -> any PushProvider {
        ScriptedPushProvider()
    }

    func describe(_ profile: AppProfile) -> String { "scripted" }
}

/// Every report the pipeline counted, in order (the pipeline's `recordPush`).
final class ScriptedProviderMetrics: PushProviderMetrics {
    private let reports = Mutex<[PushReport]>([])

    var families: [any MetricFamily] { [] }
    var recorded: [PushReport] { reports.withLock { $0 } }

    func record(_ report: PushReport, profile: String) { reports.withLock { $0.append(report) } }
}

import PushSystem

/// A connection docs/protocol.md §1 may give up, without a response, to admit a new one at the
/// connection cap, ordered best first: every connection idle between keep-alive requests before any
/// incomplete request, and within each kind the earliest instant first (docs/decisions/0730).
enum GiveUpCandidate: Comparable, Sendable {
    /// A response was written and nothing of the next request has been read since `since`.
    case idleBetweenRequests(since: MonotonicInstant)
    /// The current request began at `begunAt` (its first byte; the accept for a connection's first
    /// request) and its head or body is still arriving.
    case incompleteRequest(begunAt: MonotonicInstant)

    /// Whether §1 lets it be given up at `now`: an idle connection always, an incomplete request
    /// only once it began at least `giveUpAge` (1 s) ago, so a client that has just connected or
    /// just started sending is never cut short.
    func isEligible(at now: MonotonicInstant, giveUpAge: Duration) -> Bool {
        switch self {
        case .idleBetweenRequests: true
        case .incompleteRequest(let begunAt): now >= begunAt.advanced(by: giveUpAge)
        }
    }

    /// The log field naming the kind.
    var label: String {
        switch self {
        case .idleBetweenRequests: "idle"
        case .incompleteRequest: "incomplete_request"
        }
    }
}

/// One event loop's candidates for §1's give-up at the connection cap, in two queues ordered by
/// instant: connections idle between keep-alive requests, and requests still arriving. A connection
/// is entered when it becomes idle, when it is accepted (its first request begins then) and when a
/// later request is found incomplete after a read. Entries are never removed when their connection
/// moves on; an entry counts only while `standing` (what the connection's state machine says now)
/// still matches it, so the hot path is one insertion and the choice a few lookups, never a scan of
/// every connection. Pure: the loop supplies each connection's standing and the clock.
struct GiveUpIndex: Sendable {
    struct Choice: Equatable, Sendable {
        let connectionID: UInt64
        let candidate: GiveUpCandidate
    }

    /// A connection's candidacy now, ignoring the age rule; nil when it is closed or its request is
    /// complete (being handled, or its response being written) — never given up.
    typealias Standing = (_ connectionID: UInt64) -> GiveUpCandidate?

    let giveUpAge: Duration
    private var idle = OldestFirstQueue()
    private var incomplete = OldestFirstQueue()

    init(giveUpAge: Duration) {
        self.giveUpAge = giveUpAge
    }

    /// Entries held in both queues, stale ones included (for tests).
    var count: Int { idle.count + incomplete.count }

    /// Connection `connectionID` became `candidate`. `standing` is used only to drop stale entries
    /// when they could outnumber the `openConnections` live ones.
    mutating func note(
        _ connectionID: UInt64, _ candidate: GiveUpCandidate, openConnections: Int, standing: Standing
    ) {
        switch candidate {
        case .idleBetweenRequests(let since):
            idle.insert(
                connectionID, since: since, openConnections: openConnections,
                isCurrent: { Self.isCurrentIdle($0, standing) })
        case .incompleteRequest(let begunAt):
            incomplete.insert(
                connectionID, since: begunAt, openConnections: openConnections,
                isCurrent: { Self.isCurrentIncomplete($0, standing) })
        }
    }

    /// The connection §1 gives up at `now`, left in place: the one idle the longest between
    /// keep-alive requests; else, when none is, the incomplete request that began longest ago, if
    /// that was at least `giveUpAge` ago. nil when there is none. Stale entries met on the way are
    /// dropped.
    mutating func best(at now: MonotonicInstant, standing: Standing) -> Choice? {
        if let entry = idle.oldest(isCurrent: { Self.isCurrentIdle($0, standing) }) {
            return Choice(connectionID: entry.connectionID, candidate: .idleBetweenRequests(since: entry.since))
        }
        // The queue is in order, so when its oldest current request is too young, all are.
        guard let entry = incomplete.oldest(isCurrent: { Self.isCurrentIncomplete($0, standing) }) else { return nil }
        let candidate = GiveUpCandidate.incompleteRequest(begunAt: entry.since)
        guard candidate.isEligible(at: now, giveUpAge: giveUpAge) else { return nil }
        return Choice(connectionID: entry.connectionID, candidate: candidate)
    }

    /// Like `best(at:standing:)`, but removes the entry it returns.
    mutating func takeBest(at now: MonotonicInstant, standing: Standing) -> Choice? {
        guard let choice = best(at: now, standing: standing) else { return nil }
        switch choice.candidate {
        case .idleBetweenRequests: idle.removeOldest()
        case .incompleteRequest: incomplete.removeOldest()
        }
        return choice
    }

    /// The instants of each queue's first entry, stale or not, in nanoseconds (`UInt64.max` when
    /// empty): what other loops read to find the loop holding the best candidate.
    var hints: (idle: UInt64, incomplete: UInt64) {
        (idle.front?.since.nanoseconds ?? .max, incomplete.front?.since.nanoseconds ?? .max)
    }

    /// What another loop's `hints` promise at `now`, with `age` the give-up age: never worse than the best candidate that loop
    /// holds, since a queue's first entry is never later than its first current one. nil when it
    /// can hold none.
    static func hinted(idle: UInt64, incomplete: UInt64, at now: MonotonicInstant, age: Duration) -> GiveUpCandidate? {
        if idle != .max { return .idleBetweenRequests(since: MonotonicInstant(nanoseconds: idle)) }
        guard incomplete != .max else { return nil }
        let candidate = GiveUpCandidate.incompleteRequest(begunAt: MonotonicInstant(nanoseconds: incomplete))
        return candidate.isEligible(at: now, giveUpAge: age) ? candidate : nil
    }

    private static func isCurrentIdle(_ entry: OldestFirstQueue.Entry, _ standing: Standing) -> Bool {
        standing(entry.connectionID) == .idleBetweenRequests(since: entry.since)
    }

    private static func isCurrentIncomplete(_ entry: OldestFirstQueue.Entry, _ standing: Standing) -> Bool {
        standing(entry.connectionID) == .incompleteRequest(begunAt: entry.since)
    }
}

/// Connection ids with an instant each, oldest first. An entry may be inserted slightly out of
/// order (an accept instant taken on the acceptor loop can precede entries the receiving loop
/// added meanwhile), so insertion walks back from the end, which is a step or two. Stale entries
/// are dropped when they reach the front, or all at once when they could outnumber the live ones.
struct OldestFirstQueue: Sendable {
    struct Entry: Equatable, Sendable {
        let connectionID: UInt64
        let since: MonotonicInstant
    }

    private var entries: [Entry] = []
    private var head = 0

    /// Entries held, stale ones included.
    var count: Int { entries.count - head }

    /// The first entry held, stale or not: never later than the first current one.
    var front: Entry? { head < entries.count ? entries[head] : nil }

    /// Enters `connectionID` at `since`. When the stale entries could outnumber the
    /// `openConnections` live ones, keeps only those `isCurrent` confirms, so the queue stays within
    /// a small multiple of the open connections.
    mutating func insert(
        _ connectionID: UInt64, since: MonotonicInstant, openConnections: Int, isCurrent: (Entry) -> Bool
    ) {
        var index = entries.count
        while index > head && entries[index - 1].since > since { index -= 1 }
        entries.insert(Entry(connectionID: connectionID, since: since), at: index)
        if count > 2 * openConnections + 64 {
            entries = entries[head...].filter(isCurrent)
            head = 0
        }
    }

    /// The oldest entry that `isCurrent` confirms, left in place; every entry before it is dropped.
    /// nil when none is.
    mutating func oldest(isCurrent: (Entry) -> Bool) -> Entry? {
        defer { compact() }
        while head < entries.count {
            if isCurrent(entries[head]) { return entries[head] }
            head += 1
        }
        return nil
    }

    /// Drops the first entry (the one `oldest(isCurrent:)` just returned).
    mutating func removeOldest() {
        guard head < entries.count else { return }
        head += 1
        compact()
    }

    private mutating func compact() {
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64 && head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }
}

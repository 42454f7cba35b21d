import PushSystem
import Synchronization

/// The connection limits of docs/protocol.md §1, decided at accept: at most `maxPerPeer` open from
/// one peer group (an IPv4 address, an IPv6 /64) unless the peer is exempt (a trusted proxy), and at
/// most `maxConnections` open in all. Pure: the event loop carries out the decision.
struct ConnectionAdmission: Sendable {
    enum Decision: Equatable, Sendable {
        case accept
        /// The peer's group holds its limit: answer `503 temporarily_unavailable` and close at once.
        case overPeerLimit
        /// The listener holds its limit: close the connection idle the longest between keep-alive
        /// requests and ask again, or, when none is idle, answer the same 503.
        case atConnectionLimit
    }

    let maxConnections: Int
    let maxPerPeer: Int
    private(set) var openCount = 0
    private var perPeer: [PeerGroup: Int] = [:]

    init(maxConnections: Int, maxPerPeer: Int) {
        self.maxConnections = maxConnections
        self.maxPerPeer = maxPerPeer
    }

    /// Open connections from `peer`'s group.
    func openCount(from peer: PeerGroup) -> Int { perPeer[peer, default: 0] }

    /// A connection from `peer` was accepted by the kernel. The per-peer limit comes first, so a
    /// peer over its own limit never costs another client its idle connection. `isExempt` is asked
    /// only when the group is at its limit, so the common path costs one dictionary lookup.
    mutating func admit(peer: PeerGroup, isExempt: () -> Bool) -> Decision {
        let fromPeer = perPeer[peer, default: 0]
        if fromPeer >= maxPerPeer && !isExempt() { return .overPeerLimit }
        guard openCount < maxConnections else { return .atConnectionLimit }
        openCount += 1
        perPeer[peer] = fromPeer + 1
        return .accept
    }

    /// An admitted connection from `peer` closed.
    mutating func release(peer: PeerGroup) {
        guard let fromPeer = perPeer[peer] else { return }
        openCount -= 1
        perPeer[peer] = fromPeer > 1 ? fromPeer - 1 : nil
    }
}

/// One `ConnectionAdmission` shared by every event loop of a listener, so that §1's caps count the
/// listener's connections, not one loop's (docs/decisions/0470). Taken once when a connection is
/// accepted and once when it closes, never per request.
final class SharedAdmission: Sendable {
    private let state: Mutex<ConnectionAdmission>

    init(maxConnections: Int, maxPerPeer: Int) {
        state = Mutex(ConnectionAdmission(maxConnections: maxConnections, maxPerPeer: maxPerPeer))
    }

    func admit(peer: PeerGroup, isExempt: () -> Bool) -> ConnectionAdmission.Decision {
        state.withLock { $0.admit(peer: peer, isExempt: isExempt) }
    }

    func release(peer: PeerGroup) {
        state.withLock { $0.release(peer: peer) }
    }
}

/// The connections idle between keep-alive requests, longest idle first: the candidates docs/protocol.md
/// §1 closes at the connection cap. A connection is entered each time it becomes idle; an entry is
/// not removed when the connection gets its next request or closes, but is dropped when it comes up
/// and its connection is no longer idle since that instant, so the hot path is one append. Entries
/// arrive in the event loop's clock order, so the oldest is always at the front.
struct IdleConnectionQueue: Sendable {
    struct Entry: Equatable, Sendable {
        let connectionID: UInt64
        let since: MonotonicInstant
    }

    private var entries: [Entry] = []
    private var head = 0

    /// Entries held, stale ones included (for tests).
    var count: Int { entries.count - head }

    /// Connection `connectionID` became idle between requests at `since` (not before the last entry).
    /// When the stale entries could outnumber the `openConnections` live ones, the queue keeps only
    /// those `isCurrent` confirms, so it stays within a small multiple of the open connections.
    mutating func becameIdle(
        _ connectionID: UInt64, since: MonotonicInstant, openConnections: Int, isCurrent: (Entry) -> Bool
    ) {
        entries.append(Entry(connectionID: connectionID, since: since))
        if count > 2 * openConnections + 64 {
            entries = entries[head...].filter(isCurrent)
            head = 0
        }
    }

    /// The first entry held, stale or not: a hint of how long this queue's connections have been
    /// idle that is never later than the truth.
    var front: Entry? { head < entries.count ? entries[head] : nil }

    /// The longest-idle entry that `isCurrent` confirms (its connection is still open and idle since
    /// that entry's instant), left in place; every entry before it is dropped. nil when none is.
    mutating func longestIdle(isCurrent: (Entry) -> Bool) -> Entry? {
        defer { compact() }
        while head < entries.count {
            if isCurrent(entries[head]) { return entries[head] }
            head += 1
        }
        return nil
    }

    /// Like `longestIdle(isCurrent:)`, but removes the entry it returns.
    mutating func takeLongestIdle(isCurrent: (Entry) -> Bool) -> Entry? {
        guard let entry = longestIdle(isCurrent: isCurrent) else { return nil }
        head += 1
        compact()
        return entry
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

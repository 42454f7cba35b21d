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
        /// The listener holds its limit: give up the connection `GiveUpIndex` names and ask again,
        /// or, when it names none, answer the same 503.
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
    /// peer over its own limit never costs another client its connection. `isExempt` is asked
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

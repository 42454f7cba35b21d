/// The worker queue's places shared out among the relays (docs/protocol.md §13: one relay's
/// traffic must not starve another's triggers): each relay holds at most its share of queued
/// triggers, so a flood on one relay fills only its own places (docs/decisions/0720). Pure.
struct MarmotQueueShares {
    let sharePerRelay: Int
    private var queued: [Int]

    init(capacity: Int, relayCount: Int) {
        precondition(relayCount >= 1 && capacity >= 1, "at least one relay and one place")
        sharePerRelay = max(1, capacity / relayCount)
        queued = Array(repeating: 0, count: relayCount)
    }

    /// The worker queue's capacity: every share, so the queue itself never refuses a reserved place.
    var totalCapacity: Int { sharePerRelay * queued.count }

    /// Takes a place for a trigger of `relay`; false when its share is full.
    mutating func reserve(relay: Int) -> Bool {
        guard queued[relay] < sharePerRelay else { return false }
        queued[relay] += 1
        return true
    }

    /// Gives back a place of `relay` once its trigger has been processed.
    mutating func release(relay: Int) {
        queued[relay] = max(0, queued[relay] - 1)
    }
}

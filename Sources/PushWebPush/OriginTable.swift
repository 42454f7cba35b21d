/// Per-origin values bounded by count, least recently used first out, O(1) per lookup and per
/// eviction (docs/protocol.md §8b: every per-origin table holds at most 10,000 origins; an evicted
/// origin starts again from an empty table entry). A doubly linked list threaded through slots.
struct OriginTable<Value> {
    private struct Slot {
        var key: String
        var value: Value
        var newer: Int
        var older: Int
    }

    let capacity: Int
    private var slots: [Slot] = []
    private var indexByKey: [String: Int] = [:]
    /// The most and the least recently used slot; -1 when empty.
    private var newest = -1
    private var oldest = -1

    init(capacity: Int) { self.capacity = max(1, capacity) }

    var count: Int { indexByKey.count }

    /// The value of `key`, made by `make` when absent (evicting the least recently used origin
    /// when full), marked most recently used; `body` may change it.
    mutating func withValue<Result>(
        for key: String, make: () -> Value, _ body: (inout Value) -> Result
    ) -> Result {
        let index: Int
        if let found = indexByKey[key] {
            index = found
            unlink(index)
        } else if slots.count < capacity {
            index = slots.count
            slots.append(Slot(key: key, value: make(), newer: -1, older: -1))
            indexByKey[key] = index
        } else {
            index = oldest
            unlink(index)
            indexByKey[slots[index].key] = nil
            slots[index].key = key
            slots[index].value = make()
            indexByKey[key] = index
        }
        linkNewest(index)
        return body(&slots[index].value)
    }

    /// The value of `key` without changing its recency; nil when absent.
    func peek(_ key: String) -> Value? { indexByKey[key].map { slots[$0].value } }

    /// How many values, from the most recently used on, satisfy `condition` before the first that
    /// does not: O(the count).
    func countNewest(while condition: (Value) -> Bool) -> Int {
        var count = 0
        var index = newest
        while index >= 0, condition(slots[index].value) {
            count += 1
            index = slots[index].older
        }
        return count
    }

    private mutating func unlink(_ index: Int) {
        let newer = slots[index].newer
        let older = slots[index].older
        if newer >= 0 { slots[newer].older = older } else { newest = older }
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
    }

    private mutating func linkNewest(_ index: Int) {
        slots[index].newer = -1
        slots[index].older = newest
        if newest >= 0 { slots[newest].newer = index }
        newest = index
        if oldest < 0 { oldest = index }
    }
}

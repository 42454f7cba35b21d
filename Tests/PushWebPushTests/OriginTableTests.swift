import PushTestSupport
import Testing

@testable import PushWebPush

@Suite("OriginTable: per-origin values bounded by count, least recently used first out", .testBodyThreads)
struct OriginTableTests {
    @Test("a full table evicts the least recently used origin, and a used one stays")
    func evictsLeastRecentlyUsed() {
        var table = OriginTable<Int>(capacity: 3)
        for (index, origin) in ["a", "b", "c"].enumerated() { table.withValue(for: origin, make: { index }) { _ in } }
        table.withValue(for: "a", make: { -1 }) { _ in }
        table.withValue(for: "d", make: { 3 }) { _ in }
        #expect(table.count == 3)
        #expect(table.peek("b") == nil)
        #expect(table.peek("a") == 0)
        table.withValue(for: "e", make: { 4 }) { _ in }
        #expect(table.peek("c") == nil)
        #expect(table.peek("a") == 0 && table.peek("d") == 3 && table.peek("e") == 4)
    }

    @Test("an evicted origin starts again from a fresh value")
    func evictedOriginStartsFresh() {
        var table = OriginTable<Int>(capacity: 1)
        table.withValue(for: "a", make: { 0 }) { $0 = 9 }
        table.withValue(for: "b", make: { 0 }) { _ in }
        #expect(table.withValue(for: "a", make: { 0 }) { $0 } == 0)
    }
}

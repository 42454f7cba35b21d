import PushCrypto
import Testing

@Suite("Secure random pool")
struct SecureRandomPoolTests {
    @Test("pieces have the asked length and never repeat, across refills of a small pool")
    func piecesAcrossRefills() throws {
        // 48 is not a multiple of 20: the pool must redraw when what is left is too short.
        let pool = SecureRandomPool(capacity: 48)
        var seen: Set<[UInt8]> = []
        for _ in 0..<100 {
            let piece = try pool.bytes(20)
            #expect(piece.count == 20)
            seen.insert(piece)
        }
        #expect(seen.count == 100)
        #expect(try pool.bytes(0).isEmpty)
        #expect(try pool.bytes(48).count == 48)
    }

    @Test("the bytes look uniform: every bit value occurs about half the time")
    func bitBalance() throws {
        let pool = SecureRandomPool()
        var ones = 0
        var total = 0
        for _ in 0..<256 {
            for byte in try pool.bytes(32) {
                ones += byte.nonzeroBitCount
                total += 8
            }
        }
        // 65,536 bits: the standard deviation of the count of ones is 128; 10 σ never happens by chance.
        #expect(abs(ones - total / 2) < 1280)
    }

    @Test("concurrent tasks sharing one pool never receive the same bytes")
    func concurrentDraws() async throws {
        let pool = SecureRandomPool(capacity: 256)
        let pieces = await withTaskGroup(of: [[UInt8]].self) { group in
            for _ in 0..<16 {
                group.addTask { (0..<200).compactMap { _ in try? pool.bytes(32) } }
            }
            return await group.reduce(into: [[UInt8]]()) { $0 += $1 }
        }
        #expect(pieces.count == 16 * 200)
        #expect(Set(pieces).count == pieces.count)
    }
}

import Foundation
import Testing

@testable import PushAPNs

@Suite("The I/O thread's wake signal under concurrent signals")
struct WakeSignalRaceTests {
    /// A signal racing a drain must never leave the signal unable to wake the I/O thread: after
    /// the race, the next signal always makes the descriptor readable. (A drain that cleared its
    /// flag before reading swallowed the racing signal's byte with the flag left set, so every
    /// later signal skipped its write and the I/O thread slept until its poll cap.)
    @Test("after a signal races a drain, the next signal still wakes the poller")
    func signalRacingDrainIsNeverLost() throws {
        let wake = try WakeSignal()
        var unheard = 0
        for _ in 0..<20_000 {
            wake.signal()
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                if index == 0 { wake.drain() } else { wake.signal() }
            }
            wake.signal()
            if Socket.wait(wake.descriptor, events: Int16(POLLIN), milliseconds: 0) == 0 { unheard += 1 }
            wake.drain()
        }
        #expect(unheard == 0)
    }
}

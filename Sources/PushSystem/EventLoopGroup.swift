internal import CPushSystem
import Synchronization

/// A fixed set of event loops, handed out round-robin.
public final class EventLoopGroup: Sendable {
    public let loops: [EventLoop]
    private let nextIndex = Atomic<Int>(0)

    /// Starts `count` loops (default: one per CPU the process may use), their threads named `name`.
    public init(count: Int = EventLoopGroup.usableCPUCount(), name: String = "event-loop") throws(SystemError) {
        precondition(count > 0, "an event loop group needs at least one loop")
        var loops: [EventLoop] = []
        for _ in 0..<count {
            do {
                loops.append(try EventLoop(name: name))
            } catch {
                for loop in loops { loop.shutdown() }
                throw error
            }
        }
        self.loops = loops
    }

    /// A group of loops made elsewhere (manual loops in tests); the group shuts them down.
    public init(loops: [EventLoop]) {
        precondition(!loops.isEmpty, "an event loop group needs at least one loop")
        self.loops = loops
    }

    /// The next loop in turn.
    public func next() -> EventLoop {
        loops[nextIndex.wrappingAdd(1, ordering: .relaxed).oldValue % loops.count]
    }

    /// Shuts every loop down and waits for their threads (see `EventLoop.shutdown`).
    public func shutdown() {
        for loop in loops { loop.shutdown() }
    }

    /// The CPUs in the process's affinity mask (at least 1).
    public static func usableCPUCount() -> Int {
        max(1, Int(CPushSystem_usable_cpu_count()))
    }
}

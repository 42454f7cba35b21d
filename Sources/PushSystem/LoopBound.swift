/// State owned by one event loop, in a box any thread may hold but only that loop's thread may
/// open: every access checks `inEventLoop` and stops the process when it fails, in release builds
/// too, so a confinement mistake fails at the access instead of racing (docs/decisions/0810).
/// Loop-owned state travels to the loop in the `@Sendable` closures of `EventLoop.execute` inside
/// one of these; creating the box is not an access and may happen on any thread.
public final class LoopBound<Value>: @unchecked Sendable {
    /// The loop whose thread alone may access `value`.
    public let loop: EventLoop
    // @unchecked Sendable: `storage` is read and written only after `checkConfinement()`.
    private var storage: Value

    public init(_ value: Value, on loop: EventLoop) {
        self.loop = loop
        storage = value
    }

    /// The state; on the loop's thread only.
    public var value: Value {
        get {
            checkConfinement()
            return storage
        }
        _modify {
            checkConfinement()
            yield &storage
        }
    }

    /// Runs `body` on the loop's thread with the state; it ends the process from any other thread.
    public func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        checkConfinement()
        return try body(&storage)
    }

    private func checkConfinement() {
        precondition(loop.inEventLoop, "loop-bound state accessed off its event loop's thread")
    }
}

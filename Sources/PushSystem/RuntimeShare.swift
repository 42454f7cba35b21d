/// What one periodic part (the reaper, the status-list fetcher) holds of the application's runtime:
/// its timers on one of the loops and its jobs on the workers, both ending with it
/// (docs/decisions/0875).
public struct RuntimeShare: Sendable {
    public let timers: LoopTimers
    public let jobs: WorkerJobs

    public init(of runtime: Runtime) {
        timers = LoopTimers(on: runtime.loops.next())
        jobs = WorkerJobs(on: runtime.workers)
    }

    /// Cancels the part's timers, then waits for its running jobs; queued ones never start.
    public func stop() {
        timers.stop()
        jobs.stop()
    }
}

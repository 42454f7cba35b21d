import Foundation

/// The calling thread's name as the kernel shows it (`/proc/thread-self/comm`): the tests that
/// prove work runs on the runtime's `event-loop` or `worker` threads read it from inside the work.
public func currentThreadName() -> String {
    let name = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
    return name?.trimmingCharacters(in: .newlines) ?? ""
}

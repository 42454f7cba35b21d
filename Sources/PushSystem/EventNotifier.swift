internal import CPushSystem
import Glibc

/// An eventfd used to wake an event loop from other threads. `notify()` is safe from any thread.
public final class EventNotifier: Sendable {
    private let descriptor: FileDescriptor

    public init() throws(SystemError) {
        descriptor = FileDescriptor(
            owning: try Syscall.call("eventfd") {
                eventfd(0, CPushSystem_EFD_NONBLOCK_CLOEXEC())
            })
    }

    /// The descriptor to register for readability.
    public var rawDescriptor: Int32 { descriptor.rawValue }

    /// Makes the descriptor readable until `reset()`.
    public func notify() {
        var one: UInt64 = 1
        _ = try? Syscall.nonBlocking("write") { Glibc.write(descriptor.rawValue, &one, 8) }
    }

    /// Consumes pending notifications.
    public func reset() {
        var value: UInt64 = 0
        _ = try? Syscall.nonBlocking("read") { Glibc.read(descriptor.rawValue, &value, 8) }
    }
}

internal import CPushSystem
import Glibc

/// Readiness conditions of an epoll registration or event.
public struct EpollEvents: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let readable = EpollEvents(rawValue: CPushSystem_EPOLLIN())
    public static let writable = EpollEvents(rawValue: CPushSystem_EPOLLOUT())
    public static let readHangup = EpollEvents(rawValue: CPushSystem_EPOLLRDHUP())
    public static let hangup = EpollEvents(rawValue: CPushSystem_EPOLLHUP())
    public static let error = EpollEvents(rawValue: CPushSystem_EPOLLERR())
}

/// A level-triggered epoll instance. Registrations carry a 64-bit caller-chosen identifier.
/// Not thread-safe: one event-loop thread owns it.
public final class Epoll {
    private let descriptor: FileDescriptor
    private let events: UnsafeMutableRawPointer
    private let capacity: Int32

    /// Creates the instance with room for `capacity` events per `wait`.
    public init(capacity: Int = 256) throws(SystemError) {
        descriptor = FileDescriptor(
            owning: try Syscall.call("epoll_create1") {
                epoll_create1(CPushSystem_EPOLL_CLOEXEC())
            })
        self.capacity = Int32(capacity)
        events = UnsafeMutableRawPointer.allocate(
            byteCount: capacity * CPushSystem_epoll_event_size(), alignment: 8)
    }

    deinit { events.deallocate() }

    public func add(_ fd: Int32, id: UInt64, events interest: EpollEvents) throws(SystemError) {
        try control(EPOLL_CTL_ADD, fd, id: id, events: interest)
    }

    public func modify(_ fd: Int32, id: UInt64, events interest: EpollEvents) throws(SystemError) {
        try control(EPOLL_CTL_MOD, fd, id: id, events: interest)
    }

    public func remove(_ fd: Int32) {
        _ = epoll_ctl(descriptor.rawValue, EPOLL_CTL_DEL, fd, nil)
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) and returns how many registrations are
    /// ready; read them with `readyEvent(at:)`. An interrupted wait returns 0.
    public func wait(timeoutMilliseconds: Int32) throws(SystemError) -> Int {
        let typed = events.assumingMemoryBound(to: epoll_event.self)
        let count = epoll_wait(descriptor.rawValue, typed, capacity, timeoutMilliseconds)
        if count >= 0 { return Int(count) }
        let code = errno
        if code == EINTR { return 0 }
        throw SystemError(function: "epoll_wait", errorNumber: code)
    }

    /// The `index`-th ready registration of the last `wait`.
    public func readyEvent(at index: Int) -> (id: UInt64, events: EpollEvents) {
        let typed = events.assumingMemoryBound(to: epoll_event.self)
        return (
            CPushSystem_epoll_event_data(typed, Int32(index)),
            EpollEvents(rawValue: CPushSystem_epoll_event_events(typed, Int32(index)))
        )
    }

    private func control(_ operation: Int32, _ fd: Int32, id: UInt64, events interest: EpollEvents) throws(SystemError)
    {
        var event = epoll_event()
        CPushSystem_epoll_event_set(&event, interest.rawValue, id)
        _ = try Syscall.call("epoll_ctl") { epoll_ctl(descriptor.rawValue, operation, fd, &event) }
    }
}

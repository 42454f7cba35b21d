import Foundation
import PushSystem
import Synchronization

/// A TCP port on 127.0.0.1 that was free a moment ago, for processes that must be told their port
/// before they bind it: nginx, PostgreSQL, `serve`.
///
/// The port comes from below the kernel's ephemeral range (`ip_local_port_range`), never from it: a
/// port handed out by binding port 0 is an ephemeral one, and between its release and the child's
/// bind any outgoing connection of the machine (a test opening 10,000 client sockets) may take it as
/// its local port, so the child's bind fails. Ports below the range are never picked by `connect`.
/// A process-wide cursor, started at a random point, keeps concurrent tests apart.
public func freeLoopbackPort() throws -> Int {
    let range = LoopbackPortCursor.range
    for _ in 0..<range.count {
        let candidate = LoopbackPortCursor.next()
        guard let listener = try? TCPListener(listening: "127.0.0.1:\(candidate)") else { continue }
        listener.close()
        return candidate
    }
    throw SystemError(function: "bind", errorNumber: EADDRINUSE)
}

enum LoopbackPortCursor {
    /// From 10,000 up to the first ephemeral port (32,768 on a default Linux).
    static let range: Range<Int> = {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let low = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) }
        return 10_000..<max(12_000, low ?? 32_768)
    }()

    private static let cursor = Atomic<Int>(Int.random(in: 0..<range.count))

    static func next() -> Int {
        range.lowerBound + cursor.add(1, ordering: .relaxed).newValue % range.count
    }
}

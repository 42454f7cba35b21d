import PushSystem

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released), for
/// processes that must be told their port before they bind it: nginx, PostgreSQL, `serve`.
public func freeLoopbackPort() throws -> Int {
    let listener = try TCPListener(listening: "127.0.0.1:0")
    defer { listener.close() }
    return listener.port
}

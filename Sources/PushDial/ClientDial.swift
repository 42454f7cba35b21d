import PushCrypto
import PushSystem

/// Watches the sockets of a `ClientDial` on an event loop, for a caller that registers each socket
/// as its connect starts rather than after every call.
public protocol ClientDialWatcher: AnyObject {
    /// A socket's connect started; throwing gives up that address like a failed connect.
    func watch(_ descriptor: Int32) throws(SystemError)
    /// The socket last passed to `watch` is about to close.
    func unwatch()
}

/// Opens a client's stream to `host:port` on a non-blocking socket, as `ClientDialStateMachine`
/// decides: the TCP connect to each resolved address in turn, the proxy's `CONNECT` tunnel, the TLS
/// client handshake. The caller resolves `connectHost`, watches `descriptor` for `interest` on its
/// event loop (after every call, or as a `watcher` told of each socket) and hands readiness to
/// `handle(_:)`; once open it reads and writes through `socket` or `tls`. Not thread-safe: lives on the thread that drives its socket, like `TLSConnection`.
public final class ClientDial {
    /// Where a call into the dial left it.
    public enum Step: Equatable, Sendable {
        /// Waiting for the resolution or for `interest`.
        case pending
        case open
        /// The dial is over and its socket closed.
        case failed(ClientDialFailure)
    }

    public let host: String
    public let port: UInt16
    public let proxy: EgressProxy?
    private let tlsContext: TLSContext?
    public weak var watcher: (any ClientDialWatcher)?
    private var machine: ClientDialStateMachine
    private var tunnel: ConnectTunnel?
    public private(set) var socket: FileDescriptor?
    /// The socket's raw descriptor while one is open, else -1.
    public private(set) var descriptor: Int32 = -1
    /// The TLS session once the handshake started; nil for a plain stream.
    public private(set) var tls: TLSConnection?

    /// A dial to `host:port` through `proxy` when there is one, with TLS when there is a
    /// `tlsContext`.
    public init(host: String, port: UInt16, proxy: EgressProxy?, tlsContext: TLSContext?) {
        self.host = host
        self.port = port
        self.proxy = proxy
        self.tlsContext = tlsContext
        machine = ClientDialStateMachine(throughProxy: proxy != nil, secure: tlsContext != nil)
    }

    /// True when the stream gets TLS.
    public var isSecure: Bool { tlsContext != nil }

    /// Where the TCP connection goes: the proxy when there is one, else the target.
    public var connectHost: String { proxy?.host ?? host }
    public var connectPort: UInt16 { proxy?.port ?? port }

    /// The readiness to wait for while dialing; nil while resolving and once open or failed.
    public var interest: EpollEvents? {
        switch machine.stage {
        case .connecting: .writable
        case .tunneling: tunnel?.isWriting == true ? .writable : .readable
        case .handshaking(let progress): progress == .wantWrite ? .writable : .readable
        case .resolving, .open, .failed: nil
        }
    }

    /// The addresses of `connectHost`, or why there are none.
    public func resolved(_ result: Result<[SocketAddress], SystemError>) -> Step {
        run(.resolved(result))
    }

    /// The socket is ready (for `interest`).
    public func handle(_ events: EpollEvents) -> Step {
        switch machine.stage {
        case .connecting: run(.connectFinished(socket?.pendingConnectError()))
        case .tunneling: run(advanceTunnel())
        case .handshaking:
            if let tls { run(Self.handshake(tls)) } else { .pending }
        case .resolving: .pending
        case .open: .open
        case .failed: .pending
        }
    }

    /// Sends close_notify when TLS is up and closes the socket.
    public func close() {
        tls?.shutdown()
        tls = nil
        tunnel = nil
        closeSocket()
    }

    /// Carries out what the machine decides until it waits, opens or fails.
    private func run(_ first: ClientDialStateMachine.Event) -> Step {
        var event = first
        while true {
            switch machine.handle(event) {
            case .startConnect(let address):
                closeSocket()
                do throws(SystemError) {
                    let started = try TCPConnector.startConnect(to: address)
                    descriptor = started.rawValue
                    socket = consume started
                    try watcher?.watch(descriptor)
                    return .pending
                } catch {
                    event = .connectNotStarted(error)
                }
            case .openTunnel:
                tunnel = ConnectTunnel(host: host, port: port)
                event = advanceTunnel()
            case .startTLS:
                event = startTLS()
            case .wait: return .pending
            case .open:
                tunnel = nil
                return .open
            case .fail(let failure):
                close()
                return .failed(failure)
            }
        }
    }

    private func advanceTunnel() -> ClientDialStateMachine.Event {
        guard var tunnel, let progress = socket?.advance(&tunnel) else { return .tunnel(.pending) }
        self.tunnel = tunnel
        return .tunnel(progress)
    }

    private func startTLS() -> ClientDialStateMachine.Event {
        // The machine asks for TLS only when there is a context.
        guard let tlsContext else { return .tlsSetupFailed(CryptoError(.configuration, detail: "no TLS context")) }
        do throws(CryptoError) {
            let tls = try TLSConnection(clientOn: descriptor, context: tlsContext, serverName: host)
            self.tls = tls
            return Self.handshake(tls)
        } catch {
            return .tlsSetupFailed(error)
        }
    }

    private static func handshake(_ tls: TLSConnection) -> ClientDialStateMachine.Event {
        do throws(CryptoError) {
            return .handshake(.success(try tls.handshake()))
        } catch {
            return .handshake(.failure(error))
        }
    }

    private func closeSocket() {
        if descriptor >= 0 { watcher?.unwatch() }
        socket = nil
        descriptor = -1
    }
}

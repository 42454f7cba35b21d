import PushCrypto
import PushSystem

/// Why a client could not open its stream: a value its owner turns into its own error (the HTTP/2
/// client's `HTTP2Error`, the WebSocket client's log line), so PushCrypto keeps one error type.
public enum ClientDialFailure: Equatable, Sendable {
    /// The name resolved to no address.
    case noAddress
    case resolution(SystemError)
    /// The last address tried could not be connected.
    case connectFailed(SystemError)
    /// The proxy's `CONNECT` tunnel did not open (docs/protocol.md §12); the text says why.
    case tunnel(String)
    /// The TLS session could not be set up on the socket.
    case tlsSetup(CryptoError)
    case handshake(CryptoError)
}

/// The steps of opening a client stream, shared by the HTTP/2 and WebSocket clients: each resolved
/// address in turn until a non-blocking connect succeeds, then the proxy's `CONNECT` tunnel when
/// there is a proxy, then the TLS client handshake when the stream is secure. Pure: `ClientDial`
/// carries out its actions and turns what the socket says into its events.
public struct ClientDialStateMachine: Sendable {
    public enum Stage: Equatable, Sendable {
        case resolving
        case connecting
        case tunneling
        case handshaking(TLSProgress)
        case open
        case failed
    }

    public enum Event: Equatable, Sendable {
        case resolved(Result<[SocketAddress], SystemError>)
        /// The connect to the last address asked for could not start.
        case connectNotStarted(SystemError)
        /// The connecting socket became writable; the error is the connect's outcome.
        case connectFinished(SystemError?)
        case tunnel(ConnectTunnel.Progress)
        case tlsSetupFailed(CryptoError)
        case handshake(Result<TLSProgress, CryptoError>)
    }

    public enum Action: Equatable, Sendable {
        /// Close the socket there is, if any, and start a non-blocking connect to this address.
        case startConnect(SocketAddress)
        /// Send the `CONNECT` request and advance the tunnel.
        case openTunnel
        /// Set up TLS on the socket and advance the handshake.
        case startTLS
        /// Nothing until the socket is ready (`Stage` says for what).
        case wait
        case open
        /// Close the socket there is; the dial is over.
        case fail(ClientDialFailure)
    }

    public private(set) var stage = Stage.resolving
    private let throughProxy: Bool
    private let secure: Bool
    private var addresses: [SocketAddress] = []

    public init(throughProxy: Bool, secure: Bool) {
        self.throughProxy = throughProxy
        self.secure = secure
    }

    public mutating func handle(_ event: Event) -> Action {
        switch (stage, event) {
        case (.resolving, .resolved(.success(let found))):
            guard !found.isEmpty else { return fail(.noAddress) }
            addresses = found
            return connectNextAddress()
        case (.resolving, .resolved(.failure(let error))):
            return fail(.resolution(error))
        case (.connecting, .connectNotStarted(let error)), (.connecting, .connectFinished(let error?)):
            guard !addresses.isEmpty else { return fail(.connectFailed(error)) }
            return connectNextAddress()
        case (.connecting, .connectFinished(nil)):
            guard throughProxy else { return startStream() }
            stage = .tunneling
            return .openTunnel
        case (.tunneling, .tunnel(.pending)):
            return .wait
        case (.tunneling, .tunnel(.open)):
            return startStream()
        case (.tunneling, .tunnel(.failed(let reason))):
            return fail(.tunnel(reason))
        case (.handshaking, .tlsSetupFailed(let error)):
            return fail(.tlsSetup(error))
        case (.handshaking, .handshake(.success(.complete))):
            stage = .open
            return .open
        case (.handshaking, .handshake(.success(let progress))):
            stage = .handshaking(progress)
            return .wait
        case (.handshaking, .handshake(.failure(let error))):
            return fail(.handshake(error))
        default:
            // An event for another stage (a late resolution, readiness after the end) changes nothing.
            return .wait
        }
    }

    private mutating func connectNextAddress() -> Action {
        stage = .connecting
        return .startConnect(addresses.removeFirst())
    }

    /// TLS when the stream is secure, else the stream is open.
    private mutating func startStream() -> Action {
        guard secure else {
            stage = .open
            return .open
        }
        stage = .handshaking(.wantWrite)
        return .startTLS
    }

    private mutating func fail(_ failure: ClientDialFailure) -> Action {
        stage = .failed
        addresses = []
        return .fail(failure)
    }
}

import Glibc
import PushCrypto
import PushDial
import PushSystem
import Testing

@Suite("ClientDialStateMachine: the dial the HTTP/2 and WebSocket clients share")
struct ClientDialStateMachineTests {
    let first = SocketAddress(family: .ipv6, host: "::1", port: 443)
    let second = SocketAddress(family: .ipv4, host: "127.0.0.1", port: 443)
    let refused = SystemError(function: "connect", errorNumber: ECONNREFUSED)
    let unreachable = SystemError(function: "connect", errorNumber: ENETUNREACH)

    @Test("a refused connect moves on to the next address; the last one's error ends the dial")
    func addressesInTurn() {
        var dial = ClientDialStateMachine(throughProxy: false, secure: true)
        #expect(dial.handle(.resolved(.success([first, second]))) == .startConnect(first))
        #expect(dial.stage == .connecting)
        #expect(dial.handle(.connectFinished(refused)) == .startConnect(second))
        #expect(dial.handle(.connectNotStarted(unreachable)) == .fail(.connectFailed(unreachable)))
        #expect(dial.stage == .failed)
    }

    @Test("no address and a failed resolution end the dial before any connect")
    func resolutionFailures() {
        var empty = ClientDialStateMachine(throughProxy: false, secure: false)
        #expect(empty.handle(.resolved(.success([]))) == .fail(.noAddress))
        let failure = SystemError(function: "getaddrinfo", errorNumber: EHOSTUNREACH)
        var failed = ClientDialStateMachine(throughProxy: false, secure: false)
        #expect(failed.handle(.resolved(.failure(failure))) == .fail(.resolution(failure)))
        #expect(failed.stage == .failed)
    }

    @Test("through a proxy: the tunnel opens before the TLS handshake, which opens the stream when complete")
    func tunnelThenTLS() {
        var dial = ClientDialStateMachine(throughProxy: true, secure: true)
        #expect(dial.handle(.resolved(.success([first]))) == .startConnect(first))
        #expect(dial.handle(.connectFinished(nil)) == .openTunnel)
        #expect(dial.stage == .tunneling)
        #expect(dial.handle(.tunnel(.pending)) == .wait)
        #expect(dial.handle(.tunnel(.open)) == .startTLS)
        #expect(dial.stage == .handshaking(.wantWrite))
        #expect(dial.handle(.handshake(.success(.wantRead))) == .wait)
        #expect(dial.stage == .handshaking(.wantRead))
        #expect(dial.handle(.handshake(.success(.complete))) == .open)
        #expect(dial.stage == .open)
    }

    @Test("a plain stream without a proxy is open as soon as the connect succeeds")
    func plainDirect() {
        var dial = ClientDialStateMachine(throughProxy: false, secure: false)
        #expect(dial.handle(.resolved(.success([first]))) == .startConnect(first))
        #expect(dial.handle(.connectFinished(nil)) == .open)
        #expect(dial.stage == .open)
    }

    @Test("a refused tunnel, a TLS setup failure and a failed handshake each end the dial with their reason")
    func laterFailures() {
        var tunnel = ClientDialStateMachine(throughProxy: true, secure: true)
        _ = tunnel.handle(.resolved(.success([first, second])))
        _ = tunnel.handle(.connectFinished(nil))
        let refusal = "the proxy refused the tunnel (HTTP 403)"
        #expect(tunnel.handle(.tunnel(.failed(refusal))) == .fail(.tunnel(refusal)))

        let setup = CryptoError(.configuration, detail: "server name")
        var tlsSetup = ClientDialStateMachine(throughProxy: false, secure: true)
        _ = tlsSetup.handle(.resolved(.success([first])))
        #expect(tlsSetup.handle(.connectFinished(nil)) == .startTLS)
        #expect(tlsSetup.handle(.tlsSetupFailed(setup)) == .fail(.tlsSetup(setup)))

        let verification = CryptoError(.certificateVerification, detail: "certificate has expired")
        var handshake = ClientDialStateMachine(throughProxy: false, secure: true)
        _ = handshake.handle(.resolved(.success([first])))
        _ = handshake.handle(.connectFinished(nil))
        #expect(handshake.handle(.handshake(.failure(verification))) == .fail(.handshake(verification)))
        #expect(handshake.stage == .failed)
    }

    @Test("events after the dial ended or for another stage change nothing")
    func lateEventsIgnored() {
        var dial = ClientDialStateMachine(throughProxy: false, secure: true)
        #expect(dial.handle(.connectFinished(nil)) == .wait)
        #expect(dial.stage == .resolving)
        _ = dial.handle(.resolved(.success([])))
        #expect(dial.handle(.resolved(.success([first]))) == .wait)
        #expect(dial.handle(.handshake(.success(.complete))) == .wait)
        #expect(dial.stage == .failed)
    }
}

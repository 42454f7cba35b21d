import Glibc
import PushSystem
import PushTestSupport
import Testing

@Suite(
    "ConnectTunnel: the CONNECT request and the proxy's answer, shared by the HTTP/2 and WebSocket clients",
    .testBodyThreads)
struct ConnectTunnelTests {
    @Test(
        "the request names the target as authority and Host, an IPv6 literal in brackets",
        arguments: [
            ("relay.example", UInt16(443), "CONNECT relay.example:443 HTTP/1.1\r\nHost: relay.example:443\r\n\r\n"),
            ("::1", UInt16(8443), "CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n"),
        ])
    func request(host: String, port: UInt16, expected: String) {
        let tunnel = ConnectTunnel(host: host, port: port)
        #expect(String(decoding: tunnel.request, as: UTF8.self) == expected)
        #expect(tunnel.isWriting)
    }

    @Test(
        "an answer head opens the tunnel only when complete and 2xx",
        arguments: [
            ("HTTP/1.1 200 Connection established\r\n\r\n", ConnectTunnel.Progress.open),
            ("HTTP/1.0 204 OK\r\nVia: proxy\r\n\r\n", .open),
            ("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n", .failed("the proxy refused the tunnel (HTTP 407)")),
            ("SSH-2.0-OpenSSH\r\n\r\n", .failed("the proxy refused the tunnel (HTTP 0)")),
            ("HTTP/1.1 2000 OK\r\n\r\n", .failed("the proxy refused the tunnel (HTTP 0)")),
        ])
    func answer(head: String, expected: ConnectTunnel.Progress) {
        var tunnel = ConnectTunnel(host: "relay.example", port: 443)
        let bytes = Array(head.utf8)
        #expect(tunnel.receive(bytes.dropLast()) == nil)
        #expect(tunnel.receive(bytes.suffix(1)) == expected)
    }

    @Test("a closed connection or an endless answer head fails the tunnel")
    func closedOrTooLong() {
        var closed = ConnectTunnel(host: "relay.example", port: 443)
        #expect(closed.receive([]) == .failed("the proxy closed the connection"))
        var endless = ConnectTunnel(host: "relay.example", port: 443)
        let line = ArraySlice(Array("X-Padding: \(String(repeating: "a", count: 1_000))\r\n".utf8))
        var progress: ConnectTunnel.Progress?
        for _ in 0..<10 where progress == nil { progress = endless.receive(line) }
        #expect(progress == .failed("the proxy's answer is too long"))
    }

    @Test("over a real non-blocking socket: the request is sent, the tunnel waits, then opens on the answer")
    func overSocket() throws {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        let client = FileDescriptor(owning: ends[0])
        let proxy = FileDescriptor(owning: ends[1])
        try client.setNonBlocking()
        var tunnel = ConnectTunnel(host: "relay.example", port: 443)

        #expect(client.advance(&tunnel) == .pending)
        #expect(!tunnel.isWriting)
        var received = [UInt8](repeating: 0, count: 256)
        let count = try received.withUnsafeMutableBytes { try proxy.receive(into: $0) }
        guard case .value(let length) = count else {
            Issue.record("the proxy side received nothing")
            return
        }
        #expect(Array(received[..<length]) == tunnel.request)

        for (piece, expected) in [("HTTP/1.1 200 OK\r\n", ConnectTunnel.Progress.pending), ("\r\n", .open)] {
            _ = try Array(piece.utf8).withUnsafeBytes { try proxy.send($0) }
            #expect(client.advance(&tunnel) == expected)
        }
        proxy.close()
        #expect(client.advance(&tunnel) == .failed("the proxy closed the connection"))
    }
}

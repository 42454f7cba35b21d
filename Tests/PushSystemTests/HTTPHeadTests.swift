import PushSystem
import PushTestSupport
import Testing

@Suite(
    "HTTPHead: the end of an HTTP/1.1 head, shared by the CONNECT tunnel, the WebSocket client and the bench",
    .testBodyThreads)
struct HTTPHeadTests {
    @Test(
        "the index of the first CRLF CRLF, nil until it has all arrived",
        arguments: [
            ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", 52),
            ("HTTP/1.1 200 OK\r\n\r\nbody\r\n\r\n", 15), ("\r\n\r\n", 0), ("HTTP/1.1 200 OK\r\n\r", nil), ("", nil),
            ("a\n\n\r\n\r", nil),
        ])
    func end(text: String, expected: Int?) {
        #expect(HTTPHead.end(in: Array(text.utf8)) == expected)
    }
}

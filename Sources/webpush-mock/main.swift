import APNsMock
import PushSystem
import WebPushMock

// webpush-mock: a local Web Push service (RFC 8030/8291/8292) over TLS with ALPN h2 and http/1.1
// (docs/decisions/0800). The first line on standard output is the bound port.

let usage = """
    usage: webpush-mock --cert-file PEM --key-file PEM [--host IP] [--port N] [--url-host NAME]
                        [--record FILE]

    A local Web Push service for tests, the demo and app developers: TLS with ALPN h2 and http/1.1
    (a client choosing either works). Prints its port on the first line of standard output; SIGTERM
    or SIGINT stops it.

      POST /subscribe    makes a subscription: 201 {"endpoint":"<p256dh>.<auth>.<url>","push_resource":
                         "<url>"}, the endpoint string the app enrolls (docs/protocol.md section 8b); the
                         mock keeps the private key. Optional JSON body: {"vapid_key":"<k>"} restricts it
                         to that VAPID key (else 403), and "script":{"replies":[REPLY,…],"default":REPLY}
                         scripts its answers, REPLY being {"status":N,"retry_after":"…"|N,"location":"…",
                         "action":"respond|stall|close"} (default 201), e.g. {"script":{"replies":
                         [{"status":429,"retry_after":30},{"status":410}]}}
      POST /push/<id>    a push message: 401 without VAPID, 403 for an invalid token (signature,
                         aud, exp, sub, key), 400 for a header or body other than section 8b's (TTL,
                         Urgency high, Topic reconnect, aes128gcm, rs 4096, 118 bytes, {"reconnect":1}),
                         413 over 4096 bytes, else the subscription's scripted answer; 404 for an unknown id

    --cert-file PEM, --key-file PEM
                        the TLS server certificate (for the --url-host name) and its key
    --host IP, --port N where to listen (default 127.0.0.1, an ephemeral port)
    --url-host NAME     the host written into push resources (default the --host address)
    --record FILE       append one JSON line per push message: {"time":<Unix ms>,"path":"…",
                        "protocol":"h2|http/1.1","subscription":"…","headers":{"ttl":…,"urgency":…,
                        "topic":…,"content-encoding":…,"content-type":…},"body_bytes":N,"rs":N,"idlen":N,
                        "vapid":{"verdict":"valid|absent|…","aud":…,"sub":…,"exp":…},"plaintext":"…",
                        "problem":"…"|null,"status":N|null}; never a key or the VAPID token

    """

let commandLine = MockCommandLine(
    tool: "webpush-mock", usage: usage,
    valueFlags: ["--cert-file", "--key-file", "--host", "--port", "--url-host", "--record"])
// Before any thread exists, so that every thread inherits SIGTERM and SIGINT unblocked.
let signals = commandLine.stopSignals()
guard let certificateFile = commandLine["--cert-file"], let keyFile = commandLine["--key-file"] else {
    commandLine.fail("--cert-file and --key-file are required\n\(usage)")
}
guard let port = UInt16(commandLine["--port"] ?? "0") else { commandLine.fail("--port must be 0..65535") }

let server: WebPushMockServer
do {
    server = try WebPushMockServer(
        certificateFile: certificateFile, keyFile: keyFile, host: commandLine["--host"] ?? "127.0.0.1", port: port,
        urlHost: commandLine["--url-host"], recordsMessages: false, recordFile: commandLine["--record"])
} catch {
    commandLine.fail("\(error)", status: 1)
}

StandardStreams.writeOutput("\(server.port)\n")
_ = try? signals.waitForSignal()
server.stop()

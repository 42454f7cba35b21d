import APNsMock
import FCMMock
import PushFCM
import PushSystem

// fcm-mock: a TLS + HTTP/2 stand-in for FCM HTTP v1 and Google's OAuth token endpoint (both on one
// port: `/token` and `/v1/projects/<project>/messages:send`). Every send with a token it issued is
// accepted; scripted failures are for the in-process FCMMockServer of the tests. The first line on
// standard output is the bound port; `--record` appends what reached it to a file (docs/decisions/0740).

let usage = """
    usage: fcm-mock --cert-file PEM --key-file PEM --service-account FILE [--host IP] [--port N]
                    [--record FILE] [--accept-access-token TOKEN]

    Stands in for FCM HTTP v1 and Google's OAuth token endpoint on one TLS + HTTP/2 port, and prints
    that port on its first line of standard output; SIGTERM or SIGINT stops it. Point a gateway at it
    with PUSH_GATEWAY_FCM_URL=https://127.0.0.1:PORT, PUSH_GATEWAY_GOOGLE_TOKEN_URL=
    https://127.0.0.1:PORT/token and PUSH_GATEWAY_FCM_CA_FILE=<the CA of --cert-file>.

      POST /token                                    issues an access token for a valid RS256 assertion
      POST /v1/projects/<project_id>/messages:send   accepts every message carrying an issued token

    --cert-file PEM, --key-file PEM
                            the TLS server certificate (for 127.0.0.1 or localhost) and its key
    --service-account FILE  the service-account JSON the gateway uses: its public key verifies the
                            RS256 assertions, its client_email and project_id are the only ones served
    --host IP, --port N     where to listen (default 127.0.0.1, an ephemeral port)
    --record FILE           append one JSON line per request: {"time":<Unix ms>,"kind":"token|send|other",
                            "path":"…","status":N,"message":{…}|null}, `message` being the FCM message
                            as received (token, android priority, ttl, collapse_key, data); never the
                            assertion or an access token
    --accept-access-token TOKEN
                            also accept this bearer token on messages:send (for h2load, which
                            cannot fetch one from the token endpoint)

    """

let commandLine = MockCommandLine(
    tool: "fcm-mock", usage: usage,
    valueFlags: [
        "--cert-file", "--key-file", "--service-account", "--host", "--port", "--record", "--accept-access-token",
    ])
// Before any thread exists, so that every thread inherits SIGTERM and SIGINT unblocked.
let signals = commandLine.stopSignals()
guard let certificateFile = commandLine["--cert-file"], let keyFile = commandLine["--key-file"],
    let accountFile = commandLine["--service-account"]
else { commandLine.fail("--cert-file, --key-file and --service-account are required\n\(usage)") }
guard let port = UInt16(commandLine["--port"] ?? "0") else { commandLine.fail("--port must be 0..65535") }
guard let contents = try? FileContents.read(accountFile) else {
    commandLine.fail("cannot read the service-account file")
}
let account: ServiceAccount
do {
    account = try ServiceAccount.parse(contents)
} catch {
    commandLine.fail("service account: \(error.code)")
}

let server: FCMMockServer
do {
    server = try FCMMockServer(
        certificateFile: certificateFile, keyFile: keyFile, servicePublicKey: account.privateKey.publicKey,
        clientEmail: account.clientEmail, projectID: account.projectID, host: commandLine["--host"] ?? "127.0.0.1",
        port: port, recordsRequests: false, recordFile: commandLine["--record"])
} catch {
    commandLine.fail("\(error)", status: 1)
}

if let token = commandLine["--accept-access-token"] { server.acceptAccessToken(token) }

StandardStreams.writeOutput("\(server.port)\n")
_ = try? signals.waitForSignal()
server.stop()

import APNsMock
import FCMMock
import PushFCM
import PushSystem

// fcm-mock: a TLS + HTTP/2 stand-in for FCM HTTP v1 and Google's OAuth token endpoint (both on one
// port: `/token` and `/v1/projects/<project>/messages:send`). Every send with a token it issued is
// accepted; scripted failures are for the in-process FCMMockServer of the tests. The first line on
// standard output is the bound port.

let usage = """
    usage: fcm-mock --cert-file PEM --key-file PEM --service-account FILE [--host IP] [--port N]
                    [--accept-access-token TOKEN]

    --service-account FILE  the service-account JSON the gateway uses: its public key verifies the
                            RS256 assertions, its client_email and project_id are the only ones served
    --host IP, --port N     where to listen (default 127.0.0.1, an ephemeral port)
    --accept-access-token TOKEN
                            also accept this bearer token on messages:send (for h2load, which
                            cannot fetch one from the token endpoint)

    """

let commandLine = MockCommandLine(
    tool: "fcm-mock", usage: usage,
    valueFlags: ["--cert-file", "--key-file", "--service-account", "--host", "--port", "--accept-access-token"])
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
        port: port, recordsRequests: false)
} catch {
    commandLine.fail("\(error)", status: 1)
}

if let token = commandLine["--accept-access-token"] { server.acceptAccessToken(token) }

StandardStreams.writeOutput("\(server.port)\n")
_ = try? signals.waitForSignal()
server.stop()

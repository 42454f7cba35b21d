import APNsMock
import PushCrypto
import PushSystem

// apns-mock: a scripted TLS + HTTP/2 stand-in for Apple's provider API. The first line
// on standard output is the bound port, so a caller using `--listen 127.0.0.1:0` can read it.

let usage = """
    usage: apns-mock --cert-file PEM --key-file PEM [--listen HOST:PORT] [--record FILE] [--script FILE]
                     [--max-concurrent-streams N] [--alpn LIST] [--no-provider-token] [--client-ca-file PEM]
                     [--provider-public-key PEM]

    Answers Apple's provider API (POST /3/device/<token>) over TLS + HTTP/2 and prints the bound port
    on its first line of standard output; SIGTERM or SIGINT stops it.

    --listen HOST:PORT     where to listen (default 127.0.0.1:0, a free port)
    --script FILE          answers to give; default: 200 for everything. A JSON object, every member
                           optional: {"default":REPLY,"sequence":[REPLY,…],"tokens":{"<hex token>":[REPLY,…]},
                           "goaway_after_streams":N,"goaway_connections":N}; a request takes its token's
                           next unused reply, else the sequence's, else the default. REPLY is
                           {"action":"respond|stall|refuse|close|goaway","status":N,"reason":"BadDeviceToken",
                           "timestamp":MS,"retry_after":"…"|N,"delay_ms":N}, e.g.
                           {"sequence":[{"status":410,"reason":"Unregistered","timestamp":1767225600000}]}
    --record FILE          append one JSON line per request received: {"connection":N,
                           "client_certificate":…,"stream":N,"disposition":"answered|stalled|refused|closed|
                           unprocessed","status":N|null,"headers":[["name","value"],…],"body_base64":"…"}
    --max-concurrent-streams N
                           SETTINGS_MAX_CONCURRENT_STREAMS to announce (default 1000)
    --alpn LIST            ALPN protocols to accept (default h2)
    --no-provider-token    accept requests without `authorization` (certificate auth)
    --client-ca-file PEM   require TLS client certificates signed by this CA (certificate auth)
    --provider-public-key PEM
                           P-256 public key (SubjectPublicKeyInfo) of the provider's .p8 key: every
                           bearer JWT must carry a valid ES256 signature by it, else
                           403 InvalidProviderToken; without it only the JWT's shape is checked

    """

let commandLine = MockCommandLine(
    tool: "apns-mock", usage: usage,
    valueFlags: [
        "--listen", "--cert-file", "--key-file", "--record", "--script", "--max-concurrent-streams", "--alpn",
        "--client-ca-file", "--provider-public-key",
    ],
    switches: ["--no-provider-token"])
let signals = commandLine.stopSignals()

let listen = commandLine["--listen"] ?? "127.0.0.1:0"
var maximumConcurrentStreams: UInt32 = 1000
if let value = commandLine["--max-concurrent-streams"] {
    guard let number = UInt32(value), number > 0 else {
        commandLine.fail("--max-concurrent-streams must be a positive integer")
    }
    maximumConcurrentStreams = number
}
let alpnProtocols = commandLine["--alpn"].map { $0.split(separator: ",").map(String.init) } ?? ["h2"]

guard let certificateFile = commandLine["--cert-file"], let keyFile = commandLine["--key-file"] else {
    commandLine.fail("--cert-file and --key-file are required\n\(usage)")
}
guard let separator = listen.lastIndex(of: ":"), let port = UInt16(listen[listen.index(after: separator)...]) else {
    commandLine.fail("--listen must be HOST:PORT")
}
var host = String(listen[..<separator])
if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }

var script = APNsMockScript()
if let scriptFile = commandLine["--script"] {
    guard let contents = try? FileContents.read(scriptFile) else { commandLine.fail("cannot read the script file") }
    do {
        script = try APNsMockScript.parse(contents)
    } catch {
        commandLine.fail("script: \(error)")
    }
}

var tokenVerifier: APNsMockValidator.TokenVerifier?
if let providerPublicKeyFile = commandLine["--provider-public-key"] {
    guard let contents = try? FileContents.read(providerPublicKeyFile),
        let publicKey = try? P256PublicKey(pem: String(decoding: contents, as: UTF8.self))
    else { commandLine.fail("--provider-public-key must name a PEM P-256 public key") }
    tokenVerifier = APNsMockValidator.signatureVerifier(publicKey)
}

let server: APNsMockServer
do {
    server = try APNsMockServer(
        configuration: APNsMockServer.Configuration(
            host: host, port: port, certificateFile: certificateFile, keyFile: keyFile, alpnProtocols: alpnProtocols,
            maximumConcurrentStreams: maximumConcurrentStreams, script: script,
            validator: APNsMockValidator(
                requireProviderToken: !commandLine.isSet("--no-provider-token"), tokenVerifier: tokenVerifier),
            recordFile: commandLine["--record"], clientTrustAnchorsFile: commandLine["--client-ca-file"]))
} catch {
    commandLine.fail("\(error)", status: 1)
}

StandardStreams.writeOutput("\(server.port)\n")
// The server's threads do the work until SIGTERM or SIGINT.
_ = try? signals.waitForSignal()
server.stop()

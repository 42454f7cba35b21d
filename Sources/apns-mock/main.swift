import APNsMock
import Glibc
import PushCrypto
import PushSystem

// apns-mock: a scripted TLS + HTTP/2 stand-in for Apple's provider API. The first line
// on standard output is the bound port, so a caller using `--listen 127.0.0.1:0` can read it.

// Before any thread exists: it unblocks SIGTERM and SIGINT, which a parent (a test runner) may
// have blocked, and new threads inherit that mask.
let signals: SignalNotifier
do {
    signals = try SignalNotifier()
} catch {
    StandardStreams.writeError("apns-mock: \(error)\n")
    exit(1)
}

let usage = """
    usage: apns-mock --cert-file PEM --key-file PEM [--listen HOST:PORT] [--record FILE] [--script FILE]
                     [--max-concurrent-streams N] [--alpn LIST] [--no-provider-token] [--client-ca-file PEM]
                     [--provider-public-key PEM]

    --script FILE          answers to give (see APNsMockScript.parse); default: 200 for everything
    --record FILE          append one JSON line per request received
    --alpn LIST            ALPN protocols to accept (default h2)
    --no-provider-token    accept requests without `authorization` (certificate auth)
    --client-ca-file PEM   require TLS client certificates signed by this CA (certificate auth)
    --provider-public-key PEM
                           P-256 public key (SubjectPublicKeyInfo) of the provider's .p8 key: every
                           bearer JWT must carry a valid ES256 signature by it, else
                           403 InvalidProviderToken; without it only the JWT's shape is checked

    """

func fail(_ message: String, status: Int32 = 2) -> Never {
    StandardStreams.writeError("apns-mock: \(message)\n")
    exit(status)
}

var arguments = CommandLine.arguments.dropFirst()
var listen = "127.0.0.1:0"
var certificateFile: String?
var keyFile: String?
var recordFile: String?
var scriptFile: String?
var maximumConcurrentStreams: UInt32 = 1000
var alpnProtocols = ["h2"]
var requireProviderToken = true
var clientTrustAnchorsFile: String?
var providerPublicKeyFile: String?

while let flag = arguments.popFirst() {
    if flag == "--no-provider-token" {
        requireProviderToken = false
        continue
    }
    guard let value = arguments.popFirst() else { fail("\(flag) needs a value\n\(usage)") }
    switch flag {
    case "--listen": listen = value
    case "--cert-file": certificateFile = value
    case "--key-file": keyFile = value
    case "--record": recordFile = value
    case "--script": scriptFile = value
    case "--max-concurrent-streams":
        guard let number = UInt32(value), number > 0 else {
            fail("--max-concurrent-streams must be a positive integer")
        }
        maximumConcurrentStreams = number
    case "--alpn": alpnProtocols = value.split(separator: ",").map(String.init)
    case "--client-ca-file": clientTrustAnchorsFile = value
    case "--provider-public-key": providerPublicKeyFile = value
    default: fail("unknown flag \(flag)\n\(usage)")
    }
}

guard let certificateFile, let keyFile else { fail("--cert-file and --key-file are required\n\(usage)") }
guard let separator = listen.lastIndex(of: ":"), let port = UInt16(listen[listen.index(after: separator)...]) else {
    fail("--listen must be HOST:PORT")
}
var host = String(listen[..<separator])
if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }

var script = APNsMockScript()
if let scriptFile {
    guard let contents = try? FileContents.read(scriptFile) else { fail("cannot read the script file") }
    do {
        script = try APNsMockScript.parse(contents)
    } catch {
        fail("script: \(error)")
    }
}

var tokenVerifier: APNsMockValidator.TokenVerifier?
if let providerPublicKeyFile {
    guard let contents = try? FileContents.read(providerPublicKeyFile),
        let publicKey = try? P256PublicKey(pem: String(decoding: contents, as: UTF8.self))
    else { fail("--provider-public-key must name a PEM P-256 public key") }
    tokenVerifier = APNsMockValidator.signatureVerifier(publicKey)
}

let server: APNsMockServer
do {
    server = try APNsMockServer(
        configuration: APNsMockServer.Configuration(
            host: host, port: port, certificateFile: certificateFile, keyFile: keyFile, alpnProtocols: alpnProtocols,
            maximumConcurrentStreams: maximumConcurrentStreams, script: script,
            validator: APNsMockValidator(requireProviderToken: requireProviderToken, tokenVerifier: tokenVerifier),
            recordFile: recordFile,
            clientTrustAnchorsFile: clientTrustAnchorsFile))
} catch {
    fail("\(error)", status: 1)
}

StandardStreams.writeOutput("\(server.port)\n")
// The server's threads do the work until SIGTERM or SIGINT.
_ = try? signals.waitForSignal()
server.stop()

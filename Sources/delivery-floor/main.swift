import Foundation
import PushAPNs
import PushCrypto
import PushHTTP
import PushHTTP2
import PushNostr
import PushSystem

// delivery-floor: the CPU a delivery cannot go below (docs/performance.md "The delivery's floor"),
// timed in this process: one BIP-340 verification (the NIP-98 event), two AES-256-GCM opens (grant
// and token), one HTTP/1.1 request parse + response encode of a delivery-sized exchange, and one
// HTTP/2 stream to the APNs stand-in scripts/bench-deliveries runs. Prints one line per part and
// the sum, in µs of process CPU. Not a test.

let usage = """
    usage: delivery-floor --port PORT --ca-file PEM --private-key-file P8 [--seconds S] [--streams N]

    Times the CPU a delivery cannot go below against the APNs stand-in on PORT (apns-mock, trusted
    through the CA in --ca-file; the provider token signed with the .p8 key): each part for S seconds
    of process CPU (default 1), the HTTP/2 part with N streams (default 2000). Prints one line per
    part and the sum, in µs of process CPU.

    """

func fail(_ message: String) -> Never {
    StandardStreams.writeError("delivery-floor: \(message)\n")
    exit(2)
}

var arguments = CommandLine.arguments.dropFirst()
var port: UInt16?
var caFile: String?
var privateKeyFile: String?
var seconds = 1.0
var streams = 2_000
while let flag = arguments.popFirst() {
    if flag == "--help" || flag == "-h" {
        StandardStreams.writeOutput(usage)
        exit(0)
    }
    guard let value = arguments.popFirst() else { fail("\(flag) needs a value\n\(usage)") }
    switch flag {
    case "--port": port = UInt16(value)
    case "--ca-file": caFile = value
    case "--private-key-file": privateKeyFile = value
    case "--seconds": seconds = Double(value) ?? 0
    case "--streams": streams = Int(value) ?? 0
    default: fail("unknown flag \(flag)\n\(usage)")
    }
}
guard let port, let caFile, let privateKeyFile, seconds > 0, streams > 0 else { fail(usage) }

func cpuSeconds() -> Double { ProcessStatistics.current().cpuSeconds ?? 0 }

/// Runs `body` in rounds until `seconds` of process CPU have passed; µs of CPU per call.
@MainActor
func microsecondsPerCall(_ body: () -> Bool) -> Double {
    var calls = 0
    let start = cpuSeconds()
    var spent = 0.0
    while spent < seconds {
        for _ in 0..<200 { guard body() else { fail("a floor step failed") } }
        calls += 200
        spent = cpuSeconds() - start
    }
    return spent / Double(calls) * 1e6
}

// One BIP-340 verification of a NIP-98 event id.
let signer = SchnorrSigningKey(secretKey: [UInt8](repeating: 0x17, count: 32))!
let eventID = [UInt8](repeating: 0x42, count: 32)
let signature = signer.sign(message32: eventID, auxiliaryRandomness: [UInt8](repeating: 0, count: 32))
let verify = microsecondsPerCall { Schnorr.verify(signature: signature, message: eventID, publicKey: signer.publicKey) }

// Two AES-256-GCM opens: the grant and the device token, at their sealed sizes.
let key = [UInt8](repeating: 0x33, count: 32)
let nonce = [UInt8](repeating: 0x01, count: 12)
let grant = try AES256GCM.seal(
    key: key, nonce: nonce, plaintext: [UInt8](repeating: 0x61, count: 90), additionalData: [1])
let token = try AES256GCM.seal(
    key: key, nonce: nonce, plaintext: [UInt8](repeating: 0x62, count: 32), additionalData: [2])
let opens = microsecondsPerCall {
    (try? AES256GCM.open(grant, key: key, nonce: nonce, additionalData: [1])) != nil
        && (try? AES256GCM.open(token, key: key, nonce: nonce, additionalData: [2])) != nil
}

// One HTTP/1.1 exchange of a delivery's size: the relay's POST with its NIP-98 header and body,
// parsed, and the 200 encoded.
let body = Array(
    #"{"v":1,"grant":"\#(String(repeating: "g", count: 160))","event_id":"\#(String(repeating: "e", count: 64))"}"#.utf8
)
let request =
    Array(
        ("POST /v1/deliveries/apns HTTP/1.1\r\nHost: push.example\r\nContent-Type: application/json\r\n"
            + "Authorization: Nostr \(String(repeating: "A", count: 600))\r\nContent-Length: \(body.count)\r\n\r\n")
            .utf8)
    + body
let answer = Response.json(status: 200, #"{"status":"accepted"}"#)
let exchange = microsecondsPerCall {
    var parser = HTTPRequestParser { _ in 65_536 }
    let parsed = request.withUnsafeBytes { parser.parse($0) }
    guard case .request = parsed else { return false }
    return !ResponseEncoder.encode(answer, close: false).isEmpty
}

// One HTTP/2 stream to the APNs stand-in, one at a time over one warm connection: the client's CPU
// (its event loop and the waiting caller), not the server's.
guard let keyData = try? FileContents.read(privateKeyFile) else { fail("--private-key-file must name a .p8 PEM") }
let credential = try APNsProfile.Credential.token(
    teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: String(decoding: keyData, as: UTF8.self))
let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: 16)
let client = APNsClient(configuration: HTTP2ClientConfiguration(maximumConnectionsPerPool: 1), on: runtime.loops.next())
let profile = APNsProfile(
    server: APNsServer(host: "localhost", port: port), topic: "com.example.buzz", credential: credential,
    extraTrustAnchorsFile: caFile)
func notification(_ index: Int) -> APNsNotification {
    let suffix = String(index, radix: 16)
    return APNsNotification(
        deviceToken: (0..<32).map { UInt8(truncatingIfNeeded: $0 &+ index) },
        requestID: "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - suffix.count)) + suffix,
        expiresAt: 1_900_000_000)
}
guard client.send(notification(0), profile: profile).outcome == .accepted else { fail("the warm-up push failed") }
let pushes = (1...streams).map(notification)
let streamStart = cpuSeconds()
for push in pushes where client.send(push, profile: profile).outcome != .accepted { fail("a push failed") }
let stream = (cpuSeconds() - streamStart) / Double(streams) * 1e6
client.shutdown()
runtime.shutdown()

func row(_ name: String, _ microseconds: Double) {
    StandardStreams.writeOutput("| \(name) | \(String(format: "%.1f", microseconds)) |\n")
}
StandardStreams.writeOutput("| floor part | CPU µs |\n|---|---|\n")
row("BIP-340 verification", verify)
row("2 × AES-256-GCM open", opens)
row("HTTP/1.1 parse + encode", exchange)
row("HTTP/2 stream (client side)", stream)
row("**floor per delivery**", verify + opens + exchange + stream)

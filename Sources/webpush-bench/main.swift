import Foundation
import PushCrypto
import PushCurl
import PushSystem
import PushTestSupport
import PushWebPush
import Synchronization

// Development tool: the Web Push provider's CPU per message (encryption, VAPID, libcurl, TLS and
// the sender's bookkeeping) against a push service in another process, so its CPU is not counted:
// a running webpush-mock (`--endpoint`, `--ca-file`, as scripts/bench-webpush starts it) or, without
// them, the scripted local push service (HTTP/1.1 over TLS). Never shipped.

struct LoopbackResolver: HostResolver {
    func addresses(of host: String, port: Int) -> [IPAddress] { [IPAddress("127.0.0.1")!] }
}

func cpuSeconds() -> Double { ProcessStatistics.current().cpuSeconds ?? 0 }

let usage = """
    usage: webpush-bench [--endpoint SUBSCRIPTION --ca-file PEM] [MESSAGES]
    Sends MESSAGES Web Push wakes (default 2000) through WebPushSender and prints the provider's
    CPU per message, with encryption alone beside it. --endpoint is a webpush-mock subscription
    string (<p256dh>.<auth>.<url>, docs/protocol.md §8b) and --ca-file the CA of its certificate;
    without them a scripted local push service is started.

    """
func refuse() -> Never {
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--help" || arguments.first == "-h" {
    print(usage, terminator: "")
    exit(0)
}
@MainActor func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name) else { return nil }
    guard index + 1 < arguments.count else { refuse() }
    defer { arguments.removeSubrange(index...(index + 1)) }
    return arguments[index + 1]
}
let mockEndpoint = option("--endpoint")
let mockCAFile = option("--ca-file")
guard (mockEndpoint == nil) == (mockCAFile == nil), arguments.count <= 1,
    let messages = arguments.first.map({ Int($0) }) ?? 2000, messages > 0
else { refuse() }
let service = mockEndpoint == nil ? try ScriptedPushService() : nil
let endpointText: String
if let mockEndpoint {
    endpointText = mockEndpoint
} else {
    let subscriberKey = try P256PrivateKey.generate()
    endpointText =
        Base64.encodeURLNoPadding(subscriberKey.publicKey.uncompressedPoint) + "."
        + Base64.encodeURLNoPadding(try SecureRandom.bytes(16)) + ".https://push.example:\(service!.port)/status/201"
}
guard let endpoint = WebPushEndpoint(endpointText) else { fatalError("the bench endpoint does not parse") }

// Encryption alone, for the share of the total.
let encryptionStart = cpuSeconds()
for _ in 0..<messages { _ = try WebPushEncryption.encrypt(WebPushEncryption.wakePlaintext, to: endpoint) }
let encryptionCPU = cpuSeconds() - encryptionStart

var clientConfiguration = CurlMultiClient.Configuration()
clientConfiguration.extraTrustAnchorFile = try mockCAFile ?? PushServiceTestCertificates.shared().caFile
// The sender as serve runs it: on a runtime's loop, resolving on its workers (docs/decisions/0870).
let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: 4096)
let client = CurlMultiClient(eventLoop: runtime.loops.next(), configuration: clientConfiguration)
var settings = WebPushSender.Settings()
settings.addressRule = WebPushAddressRule(allowsLoopback: true)
settings.originRatePerSecond = 1_000_000
settings.requestTimeout = .seconds(120)
let sender = WebPushSender(
    client: client, resolver: LoopbackResolver(), resolverWorkers: runtime.workers, settings: settings)
let vapid = VAPIDSigner(key: try P256PrivateKey.generate(), subject: "mailto:bench@example.com")

let accepted = Atomic<Int>(0)
let finished = Atomic<Int>(0)
let done = CompletionLatch()
let wallStart = MonotonicInstant.now()
let sendStart = cpuSeconds()
let now = Int64(Date().timeIntervalSince1970)
for _ in 0..<messages {
    sender.send(endpoint: endpoint, vapid: vapid, expiresAt: now + 60, now: now) { report in
        if report.outcome == .accepted {
            accepted.add(1, ordering: .relaxed)
        } else {
            FileHandle.standardError.write(
                Data("not accepted: \(report.reason ?? "?") status \(report.status.map(String.init) ?? "none")\n".utf8))
        }
        if finished.add(1, ordering: .relaxed).newValue == messages { done.open() }
    }
}
done.wait()
let sendCPU = cpuSeconds() - sendStart
let wall = Double(wallStart.duration(to: .now()).nanosecondsClamped) / 1e9
client.shutdown()
runtime.shutdown()
service?.stop()
print("messages \(messages), accepted \(accepted.load(ordering: .relaxed)), wall \(String(format: "%.2f", wall)) s")
print(
    "provider CPU per message \(String(format: "%.0f", sendCPU / Double(messages) * 1e6)) µs"
        + " (encryption alone \(String(format: "%.0f", encryptionCPU / Double(messages) * 1e6)) µs)")

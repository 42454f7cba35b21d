import Foundation
import PushCrypto
import PushCurl
import PushSystem
import PushTestSupport
import PushWebPush
import Synchronization

// Development tool: the Web Push provider's CPU per message (encryption, VAPID, libcurl, TLS and
// the sender's bookkeeping) against the scripted local push service (HTTP/1.1 over TLS, another
// process, so its CPU is not counted). Usage: webpush-bench [messages] (default 2000). Never shipped.

struct LoopbackResolver: HostResolver {
    func addresses(of host: String, port: Int) -> [IPAddress] { [IPAddress("127.0.0.1")!] }
}

func cpuSeconds() -> Double { ProcessStatistics.current().cpuSeconds ?? 0 }

let usage = """
    usage: webpush-bench [MESSAGES]
    Sends MESSAGES Web Push wakes (default 2000) through WebPushSender to a scripted local push
    service and prints the provider's CPU per message, with encryption alone beside it.

    """
let argument = CommandLine.arguments.dropFirst().first
if argument == "--help" || argument == "-h" {
    print(usage, terminator: "")
    exit(0)
}
guard let messages = argument.map({ Int($0) }) ?? 2000, messages > 0 else {
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
let service = try ScriptedPushService()
let subscriberKey = try P256PrivateKey.generate()
let endpointText =
    Base64.encodeURLNoPadding(subscriberKey.publicKey.uncompressedPoint) + "."
    + Base64.encodeURLNoPadding(try SecureRandom.bytes(16)) + ".https://push.example:\(service.port)/status/201"
guard let endpoint = WebPushEndpoint(endpointText) else { fatalError("the bench endpoint does not parse") }

// Encryption alone, for the share of the total.
let encryptionStart = cpuSeconds()
for _ in 0..<messages { _ = try WebPushEncryption.encrypt(WebPushEncryption.wakePlaintext, to: endpoint) }
let encryptionCPU = cpuSeconds() - encryptionStart

var clientConfiguration = CurlMultiClient.Configuration()
clientConfiguration.extraTrustAnchorFile = try PushServiceTestCertificates.shared().caFile
let loop = try EventLoop()
let client = CurlMultiClient(eventLoop: loop, configuration: clientConfiguration)
let workers = try WorkerPool(threadCount: 1, queueCapacity: 4096)
var settings = WebPushSender.Settings()
settings.addressRule = WebPushAddressRule(allowsLoopback: true)
settings.originRatePerSecond = 1_000_000
settings.requestTimeout = .seconds(120)
let sender = WebPushSender(client: client, resolver: LoopbackResolver(), resolverWorkers: workers, settings: settings)
let vapid = VAPIDSigner(key: try P256PrivateKey.generate(), subject: "mailto:bench@example.com")

let accepted = Atomic<Int>(0)
let finished = Atomic<Int>(0)
let done = CompletionLatch()
let wallStart = MonotonicInstant.now()
let sendStart = cpuSeconds()
let now = Int64(Date().timeIntervalSince1970)
for _ in 0..<messages {
    sender.send(endpoint: endpoint, vapid: vapid, expiresAt: now + 60, now: now) { report in
        if report.outcome == .accepted { accepted.add(1, ordering: .relaxed) }
        if finished.add(1, ordering: .relaxed).newValue == messages { done.open() }
    }
}
done.wait()
let sendCPU = cpuSeconds() - sendStart
let wall = Double(wallStart.duration(to: .now()).nanosecondsClamped) / 1e9
client.shutdown()
workers.shutdown()
loop.shutdown()
service.stop()
print("messages \(messages), accepted \(accepted.load(ordering: .relaxed)), wall \(String(format: "%.2f", wall)) s")
print(
    "provider CPU per message \(String(format: "%.0f", sendCPU / Double(messages) * 1e6)) µs"
        + " (encryption alone \(String(format: "%.0f", encryptionCPU / Double(messages) * 1e6)) µs)")

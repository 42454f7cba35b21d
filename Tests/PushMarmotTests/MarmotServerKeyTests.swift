import Foundation
import MarmotIngress
import PushCrypto
import PushMarmot
import PushNostr
import PushSystem
import PushTestSupport
import PushWebSocket
import Synchronization
import Testing

@testable import PushGatewayCommands

/// Digest claims in memory, for a subscriber that never receives a trigger.
private final class MemoryDigestClaims: MarmotDigestClaims {
    private let claimed = Mutex<Set<[UInt8]>>([])

    func claim(_ digest: [UInt8]) throws -> Bool { claimed.withLock { $0.insert(digest).inserted } }
}

@Suite(
    "The Marmot server's public key for app developers: check-config and serve (docs/protocol.md §12)", .testBodyThreads
)
struct MarmotServerKeyTests {
    static let publicKeyHex = MarmotFixture.server.publicKey.hex

    /// The hex after `label: ` on the line that starts with it.
    static func value(_ label: String, in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(label + ": ") }.map { String($0.dropFirst(label.count + 2)) }
    }

    @Test("check-config prints the server's public key as hex and as an npub that decodes back to it, never the secret")
    func checkConfigPrintsPublicKey() throws {
        let environment = try MarmotConfigurationTests.environment()
        let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(result.exitCode == 0, "\(result.standardError)")
        #expect(Self.value("marmot server public key", in: result.standardOutput) == Self.publicKeyHex)
        let npub = try #require(Self.value("marmot server npub", in: result.standardOutput))
        #expect(npub.hasPrefix("npub1"))
        #expect(NIP19.publicKey(npub: npub)?.hex == Self.publicKeyHex)
        #expect(
            result.standardOutput.contains(
                "marmot: 2 relay(s), apns profile buzz-ios-production, fcm profile none\n"))
        #expect(!result.standardOutput.contains(MarmotFixture.serverSecretHex))

        let withoutMarmot = try ConfigurationTestEnvironment()
        let off = CheckConfigCommand.execute(arguments: [], environment: withoutMarmot.variables)
        #expect(off.exitCode == 0, "\(off.standardError)")
        #expect(!off.standardOutput.contains("marmot"))
    }

    @Test("the subscriber logs the server's public key as its npub when serve starts it, never hex, never the secret")
    func startLogsPublicKey() throws {
        let lines = Mutex<[String]>([])
        let logger = Logger(level: .info) { line in lines.withLock { $0.append(line) } }
        let metrics = MarmotMetrics()
        let relays = [WebSocketURL("ws://127.0.0.1:1")!]
        let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: 16)
        defer { runtime.shutdown() }
        let subscriber = MarmotSubscriber(
            settings: MarmotRelaySettings(serverKey: MarmotFixture.server, relays: relays, tlsContext: nil, proxy: nil),
            runtime: runtime, metrics: metrics, logger: logger, unixTime: { Int64(Date().timeIntervalSince1970) }
        ) { scheduler in
            try MarmotIngress(
                serverKey: MarmotFixture.server, relayCount: relays.count, providers: [:],
                settings: MarmotIngressSettings(), digests: MemoryDigestClaims(), metrics: metrics, logger: logger,
                unixTime: { Int64(Date().timeIntervalSince1970) }, scheduleRetry: scheduler)
        }
        try subscriber.start()
        defer { subscriber.stop() }
        let line = try #require(lines.withLock { $0.first { $0.contains(#""msg":"marmot notification server""#) } })
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(fields["public_key"] == nil)
        #expect(!line.contains(Self.publicKeyHex))
        #expect((fields["npub"] as? String).flatMap(NIP19.publicKey(npub:))?.hex == Self.publicKeyHex)
        #expect(fields["relays"] as? Int == 1)
        #expect(!lines.withLock { $0.joined() }.contains(MarmotFixture.serverSecretHex))
    }

    @Test(
        "the subscriber's relay clients run on the runtime's event loop; after stop none of them runs and the loop runs on"
    )
    func relayClientsOnTheRuntimeLoop() throws {
        // (thread name, line) of each relay connection log line.
        let lines = Mutex<[(thread: String, line: String)]>([])
        let logger = Logger(level: .debug) { line in
            guard line.contains("marmot relay connection") else { return }
            lines.withLock { $0.append((currentThreadName(), line)) }
        }
        let metrics = MarmotMetrics()
        // Nothing listens on port 1: the client connects, fails and retries after its backoff.
        let relays = [WebSocketURL("ws://127.0.0.1:1")!]
        var settings = MarmotRelaySettings(serverKey: MarmotFixture.server, relays: relays, tlsContext: nil, proxy: nil)
        settings.sessionTiming = { configuration in
            var configuration = configuration
            configuration.initialBackoff = .milliseconds(50)
            configuration.maximumBackoff = .milliseconds(100)
            return configuration
        }
        let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: 16)
        defer { runtime.shutdown() }
        let subscriber = MarmotSubscriber(
            settings: settings, runtime: runtime, metrics: metrics, logger: logger,
            unixTime: { Int64(Date().timeIntervalSince1970) }
        ) { scheduler in
            try MarmotIngress(
                serverKey: MarmotFixture.server, relayCount: relays.count, providers: [:],
                settings: MarmotIngressSettings(), digests: MemoryDigestClaims(), metrics: metrics, logger: logger,
                unixTime: { Int64(Date().timeIntervalSince1970) }, scheduleRetry: scheduler)
        }
        try subscriber.start()
        // Several attempts: the reconnect timers fire on the loop too.
        #expect(eventually(within: 20) { lines.withLock { $0.count } >= 4 })
        subscriber.stop()
        let afterStop = lines.withLock { $0 }
        #expect(afterStop.allSatisfy { $0.thread == "event-loop" }, "\(afterStop.map(\.thread))")

        // Well past the longest backoff, a timer on the same loop fires; no client ran meanwhile.
        let loop = runtime.loops.next()
        let later = CompletionLatch()
        #expect(loop.execute { loop.schedule(after: .milliseconds(500)) { later.open() } })
        #expect(later.wait(until: MonotonicInstant.now().advanced(by: .seconds(30))))
        #expect(lines.withLock { $0.count } == afterStop.count)
        #expect(NostrRelayConnectionState.allCases.allSatisfy { metrics.relayCount($0) == 0 })
    }
}

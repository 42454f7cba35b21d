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

@Suite("The Marmot server's public key for app developers: check-config and serve (docs/protocol.md §12)")
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
        let subscriber = MarmotSubscriber(
            settings: MarmotRelaySettings(serverKey: MarmotFixture.server, relays: relays, tlsContext: nil, proxy: nil),
            metrics: metrics, logger: logger, unixTime: { Int64(Date().timeIntervalSince1970) }
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
}

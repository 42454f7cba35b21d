import PushGateway
import PushTestSupport
import Testing

@Suite("Marmot configuration (docs/protocol.md §12)", .testBodyThreads)
struct MarmotConfigurationTests {
    static let key = MarmotFixture.serverSecretHex

    static func environment() throws -> ConfigurationTestEnvironment {
        try ConfigurationTestEnvironment().with("PUSH_GATEWAY_MARMOT_SECRET_KEY", key)
            .with("PUSH_GATEWAY_MARMOT_RELAYS", "wss://relay.example.org,wss://inbox.example.net:7447/nostr")
            .with("PUSH_GATEWAY_MARMOT_APNS_PROFILE", "buzz-ios-production")
    }

    @Test("without the secret key the mode is off; with it, the relays, profile and default rates are read")
    func enabled() throws {
        let off = try ConfigurationTestEnvironment().parse().get()
        #expect(off.marmot == nil)
        let marmot = try #require(try Self.environment().parse().get().marmot)
        #expect(marmot.serverKey.publicKey == MarmotFixture.server.publicKey)
        #expect(marmot.relays.map(\.description) == ["wss://relay.example.org", "wss://inbox.example.net:7447/nostr"])
        #expect(marmot.apnsProfileID == "buzz-ios-production")
        #expect(marmot.fcmProfileID == nil)
        #expect(marmot.tokenRatePerMinute == 240)
        #expect(marmot.tokenRatePerHour == 5000)
        #expect(marmot.unwrapRatePerMinute == 6000)
    }

    @Test("the secret key may come from a file, and the rates are configurable")
    func fileAndRates() throws {
        var environment = try Self.environment().with("PUSH_GATEWAY_MARMOT_SECRET_KEY", nil)
        environment = environment.with(
            "PUSH_GATEWAY_MARMOT_SECRET_KEY_FILE", try environment.write("marmot.key", Self.key + "\n")
        )
        .with("PUSH_GATEWAY_MARMOT_TOKEN_RATE_PER_MINUTE", "10")
        .with("PUSH_GATEWAY_MARMOT_TOKEN_RATE_PER_HOUR", "100")
        .with("PUSH_GATEWAY_MARMOT_UNWRAP_RATE_PER_MINUTE", "30")
        let marmot = try #require(try environment.parse().get().marmot)
        #expect(marmot.serverKey.publicKey == MarmotFixture.server.publicKey)
        #expect(
            [marmot.tokenRatePerMinute, marmot.tokenRatePerHour, marmot.unwrapRatePerMinute]
                == [10, 100, 30])
    }

    @Test("a bad key, ws:// without the switch, 17 relays, an unknown or missing profile are each refused by name")
    func refused() throws {
        let base = try Self.environment()
        let cases: [(ConfigurationTestEnvironment, String)] = [
            (
                base.with("PUSH_GATEWAY_MARMOT_SECRET_KEY", String(Self.key.uppercased())),
                "PUSH_GATEWAY_MARMOT_SECRET_KEY"
            ),
            (
                base.with("PUSH_GATEWAY_MARMOT_SECRET_KEY", String(repeating: "0", count: 64)),
                "PUSH_GATEWAY_MARMOT_SECRET_KEY"
            ),
            (base.with("PUSH_GATEWAY_MARMOT_RELAYS", "ws://127.0.0.1:7000"), "PUSH_GATEWAY_MARMOT_RELAYS"),
            (base.with("PUSH_GATEWAY_MARMOT_RELAYS", "https://relay.example.org"), "PUSH_GATEWAY_MARMOT_RELAYS"),
            (
                base.with(
                    "PUSH_GATEWAY_MARMOT_RELAYS", (0..<17).map { "wss://r\($0).example.org" }.joined(separator: ",")),
                "PUSH_GATEWAY_MARMOT_RELAYS"
            ),
            (base.with("PUSH_GATEWAY_MARMOT_RELAYS", nil), "PUSH_GATEWAY_MARMOT_RELAYS"),
            (base.with("PUSH_GATEWAY_MARMOT_APNS_PROFILE", "nope"), "PUSH_GATEWAY_MARMOT_APNS_PROFILE"),
            (base.with("PUSH_GATEWAY_MARMOT_APNS_PROFILE", nil), "PUSH_GATEWAY_MARMOT_APNS_PROFILE"),
            (base.with("PUSH_GATEWAY_MARMOT_FCM_PROFILE", "buzz-ios-production"), "PUSH_GATEWAY_MARMOT_FCM_PROFILE"),
            (base.with("PUSH_GATEWAY_MARMOT_TOKEN_RATE_PER_MINUTE", "0"), "PUSH_GATEWAY_MARMOT_TOKEN_RATE_PER_MINUTE"),
            (base.with("PUSH_GATEWAY_MARMOT_ALLOW_PLAIN_WS", "yes"), "PUSH_GATEWAY_MARMOT_ALLOW_PLAIN_WS"),
            (
                try ConfigurationTestEnvironment().with("PUSH_GATEWAY_MARMOT_RELAYS", "wss://relay.example.org"),
                "PUSH_GATEWAY_MARMOT_RELAYS"
            ),
        ]
        for (environment, variable) in cases {
            let errors = environment.errors()
            #expect(errors.map(\.variable).contains(variable), "\(variable): \(errors)")
            #expect(!errors.description.contains(Self.key), "the key never shows in an error")
        }
        let plain = base.with("PUSH_GATEWAY_MARMOT_RELAYS", "ws://127.0.0.1:7000")
            .with("PUSH_GATEWAY_MARMOT_ALLOW_PLAIN_WS", "true")
        #expect(try plain.parse().get().marmot?.relays.first?.secure == false)
    }
}

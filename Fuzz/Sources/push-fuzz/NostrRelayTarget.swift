import PushCrypto
import PushJSON
import PushMarmot
import PushNostr
import PushSystem

/// Relay messages (one per input line) fed to a subscribed relay session: every message parses or
/// is reported, every text the session sends is JSON, gift wraps only come out while subscribed,
/// and the session's state stays in its closed set.
enum NostrRelayTarget {
    static let serverKey = SchnorrSigningKey(secretKey: [UInt8](repeating: 0x11, count: 32))!

    static func prepare() { _ = serverKey }

    static func run(_ input: [UInt8]) {
        var configuration = NostrRelaySessionConfiguration(
            relayURL: "wss://relay.example.com", serverKey: serverKey, inboxRelayURLs: ["wss://relay.example.com"])
        configuration.subscriptionID = "sub"
        var session = NostrRelaySession(configuration: configuration, random: CountingRandom())
        var seconds: UInt64 = 1
        func handle(_ event: NostrRelaySession<CountingRandom>.Event) -> [NostrRelayAction] {
            seconds += 1
            return session.handle(
                event, now: MonotonicInstant(nanoseconds: seconds * 1_000_000_000), unixTime: 1_800_000_000)
        }
        _ = handle(.start)
        _ = handle(.connected)
        for line in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            _ = NostrRelayMessage(json: Array(line))
            let wasSubscribed = session.state == .subscribed
            let actions = handle(.message(String(decoding: line, as: UTF8.self)))
            for action in actions {
                switch action {
                case .send(let text):
                    FuzzCheck.require((try? JSONReader.parse(text)) != nil, "the session sent text that is not JSON")
                case .giftWrap, .malformedGiftWrap:
                    FuzzCheck.require(wasSubscribed, "a gift wrap before EOSE")
                case .closeConnection:
                    _ = handle(.disconnected)
                    _ = handle(.tick)
                case .connect:
                    _ = handle(.connected)
                case .ping, .stateChanged, .report:
                    break
                }
            }
        }
    }
}

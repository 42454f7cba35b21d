import PushCrypto
import PushMarmot
import PushNostr
import PushSystem
import PushWebSocket

/// The Marmot Push v1 mode's settings (docs/protocol.md §12, §13); nil in `GatewayConfiguration`
/// when `PUSH_GATEWAY_MARMOT_SECRET_KEY` is unset.
public struct MarmotConfiguration: Sendable {
    public let serverKey: SchnorrSigningKey
    public let relays: [WebSocketURL]
    /// The profiles whose credentials wake platform `0x01` / `0x02` tokens.
    public let apnsProfileID: String?
    public let fcmProfileID: String?
    /// `…_TOKEN_RATE_PER_MINUTE`, `…_TOKEN_RATE_PER_HOUR`: each token's buckets (§13 step 6).
    public let tokenRatePerMinute: Int
    public let tokenRatePerHour: Int
    /// `…_UNWRAP_RATE_PER_MINUTE`: the unwrap bucket the relays share (§13 step 1).
    public let unwrapRatePerMinute: Int
}

extension GatewayConfiguration {
    /// Every variable of the Marmot mode (the secret key also as `_FILE`).
    package static let marmotVariables: Set<String> = [
        "PUSH_GATEWAY_MARMOT_SECRET_KEY", "PUSH_GATEWAY_MARMOT_SECRET_KEY_FILE", "PUSH_GATEWAY_MARMOT_RELAYS",
        "PUSH_GATEWAY_MARMOT_APNS_PROFILE", "PUSH_GATEWAY_MARMOT_FCM_PROFILE",
        "PUSH_GATEWAY_MARMOT_TOKEN_RATE_PER_MINUTE", "PUSH_GATEWAY_MARMOT_TOKEN_RATE_PER_HOUR",
        "PUSH_GATEWAY_MARMOT_UNWRAP_RATE_PER_MINUTE", "PUSH_GATEWAY_MARMOT_ALLOW_PLAIN_WS",
    ]

    /// The Marmot settings when the secret key is set; every other Marmot variable without it is
    /// an error, so a half-configured mode never silently stays off.
    static func marmot(_ reader: inout EnvironmentReader, profiles: [AppProfile]?) -> MarmotConfiguration? {
        let keyName = "PUSH_GATEWAY_MARMOT_SECRET_KEY"
        let keyText: String?
        do {
            keyText = try SecretVariable.value(keyName, in: reader.environment)
        } catch {
            for problem in error.problems { reader.fail(problem.variable, problem.problem) }
            return nil
        }
        guard let keyText else {
            for name in marmotVariables.sorted() where reader.environment[name] != nil {
                reader.fail(name, "is only meaningful with \(keyName)")
            }
            return nil
        }
        let serverKey = reader.parsed(keyName, keyText, "must be 64 lowercase hex digits (a secp256k1 secret key)") {
            Hex.decode($0, byteCount: 32, lowercaseOnly: true).flatMap(SchnorrSigningKey.init(secretKey:))
        }
        let relays = marmotRelays(&reader)
        let apns = marmotProfile(&reader, "PUSH_GATEWAY_MARMOT_APNS_PROFILE", platform: .ios, profiles: profiles)
        let fcm = marmotProfile(&reader, "PUSH_GATEWAY_MARMOT_FCM_PROFILE", platform: .android, profiles: profiles)
        if reader.environment["PUSH_GATEWAY_MARMOT_APNS_PROFILE"] == nil,
            reader.environment["PUSH_GATEWAY_MARMOT_FCM_PROFILE"] == nil
        {
            reader.fail(
                "PUSH_GATEWAY_MARMOT_APNS_PROFILE",
                "or PUSH_GATEWAY_MARMOT_FCM_PROFILE is required with \(keyName)")
        }
        let perMinute = reader.integer("PUSH_GATEWAY_MARMOT_TOKEN_RATE_PER_MINUTE", in: 1...100_000, default: 240)
        let perHour = reader.integer("PUSH_GATEWAY_MARMOT_TOKEN_RATE_PER_HOUR", in: 1...1_000_000, default: 5000)
        let unwrap = reader.integer("PUSH_GATEWAY_MARMOT_UNWRAP_RATE_PER_MINUTE", in: 1...1_000_000, default: 6000)
        guard let serverKey, let relays, let perMinute, let perHour, let unwrap else { return nil }
        return MarmotConfiguration(
            serverKey: serverKey, relays: relays, apnsProfileID: apns, fcmProfileID: fcm,
            tokenRatePerMinute: Int(perMinute), tokenRatePerHour: Int(perHour), unwrapRatePerMinute: Int(unwrap))
    }

    /// 1...16 relay URLs, `wss://` unless `PUSH_GATEWAY_MARMOT_ALLOW_PLAIN_WS=true`.
    private static func marmotRelays(_ reader: inout EnvironmentReader) -> [WebSocketURL]? {
        let name = "PUSH_GATEWAY_MARMOT_RELAYS"
        let allowName = "PUSH_GATEWAY_MARMOT_ALLOW_PLAIN_WS"
        let allowsPlain = reader.boolean(allowName) ?? false
        guard let text = reader.required(name), let items = reader.commaList(name, text) else { return nil }
        guard items.count <= 16 else {
            reader.fail(name, "lists more than 16 relays")
            return nil
        }
        var relays: [WebSocketURL] = []
        for (index, item) in items.enumerated() {
            guard let url = WebSocketURL(String(item)) else {
                reader.fail(name, "item \(index + 1) is not a wss:// URL")
                continue
            }
            guard url.secure || allowsPlain else {
                reader.fail(name, "item \(index + 1) is ws://, accepted only with \(allowName)=true")
                continue
            }
            relays.append(url)
        }
        return relays.count == items.count ? relays : nil
    }

    /// A profile id that `PUSH_GATEWAY_PROFILES` enables for `platform`.
    private static func marmotProfile(
        _ reader: inout EnvironmentReader, _ name: String, platform: AppProfile.Platform, profiles: [AppProfile]?
    ) -> String? {
        guard let id = reader.optional(name) else { return nil }
        guard let profiles else { return id }
        guard let profile = profiles.first(where: { $0.id == id }) else {
            reader.fail(name, "names no profile of PUSH_GATEWAY_PROFILES")
            return nil
        }
        guard profile.platform == platform else {
            reader.fail(name, "names a profile whose platform is not \(platform.rawValue)")
            return nil
        }
        // §12: Marmot's platform tokens are APNs and FCM tokens, so the profile's provider must be
        // the platform's built-in one (an android profile of the `webpush` provider cannot wake them).
        let provider = platform == .ios ? builtInProviders[0] : builtInProviders[1]
        guard profile.provider == provider else {
            reader.fail(name, "names a profile whose provider is not \(provider.rawValue)")
            return nil
        }
        return id
    }
}

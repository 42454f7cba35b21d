import PushWebPush

extension GatewayConfiguration {
    /// The gateway-wide Web Push settings of docs/protocol.md §8b and §12, read as plain values;
    /// the `webpush` provider module builds its sender from them.
    public struct WebPushSettings: Sendable {
        /// `PUSH_GATEWAY_WEBPUSH_ORIGIN_RATE_PER_SECOND`: each origin's bucket, per replica.
        public let originRatePerSecond: Int
        /// `PUSH_GATEWAY_WEBPUSH_MAX_CONNECTIONS`: open Web Push connections per replica.
        public let maximumConnections: Int
        /// `PUSH_GATEWAY_WEBPUSH_NAT64_PREFIXES`: extra /96 prefixes whose embedded IPv4 is judged.
        public let nat64Prefixes: [IPAddressRange]
        /// `PUSH_GATEWAY_WEBPUSH_DENY_CIDRS`: the operator's own ranges, refused like private space.
        public let deniedRanges: [IPAddressRange]
        /// `PUSH_GATEWAY_WEBPUSH_ALLOW_LOOPBACK=true` (test only).
        public let allowsLoopback: Bool
        /// `PUSH_GATEWAY_WEBPUSH_CA_FILE`: an extra trust anchor (test only).
        public let extraTrustAnchorFile: String?

        static let defaults = WebPushSettings(
            originRatePerSecond: 100, maximumConnections: 512, nat64Prefixes: [], deniedRanges: [],
            allowsLoopback: false, extraTrustAnchorFile: nil)
    }

    /// The per-profile variables of the `webpush` provider (docs/protocol.md §12): on a profile of
    /// another provider each is a configuration error.
    static let webPushProfileVariableSuffixes = [
        "WEBPUSH_VAPID_KEY_FILE", "WEBPUSH_VAPID_SUBJECT", "WEBPUSH_ALLOWED_HOSTS",
    ]

    static let webPushInsecureVariables = ["PUSH_GATEWAY_WEBPUSH_ALLOW_LOOPBACK", "PUSH_GATEWAY_WEBPUSH_CA_FILE"]

    /// Every gateway-wide Web Push variable.
    package static let webPushVariables: Set<String> = Set(
        [
            "PUSH_GATEWAY_WEBPUSH_ORIGIN_RATE_PER_SECOND", "PUSH_GATEWAY_WEBPUSH_MAX_CONNECTIONS",
            "PUSH_GATEWAY_WEBPUSH_NAT64_PREFIXES", "PUSH_GATEWAY_WEBPUSH_DENY_CIDRS",
        ] + webPushInsecureVariables)

    static func webPushSettings(_ reader: inout EnvironmentReader) -> WebPushSettings? {
        let rate = reader.integer("PUSH_GATEWAY_WEBPUSH_ORIGIN_RATE_PER_SECOND", in: 1...100_000, default: 100)
        let connections = reader.integer("PUSH_GATEWAY_WEBPUSH_MAX_CONNECTIONS", in: 1...65_536, default: 512)
        // §12: NAT64 prefixes are IPv6 /96 blocks (RFC 6052 §2.2's 32 bits at the end).
        let nat64 = ranges(
            &reader, "PUSH_GATEWAY_WEBPUSH_NAT64_PREFIXES", "an IPv6 /96 prefix with no bits set past it"
        ) {
            !$0.network.isIPv4 && $0.prefixLength == 96
        }
        let denied = ranges(
            &reader, "PUSH_GATEWAY_WEBPUSH_DENY_CIDRS", "an IPv4 or IPv6 CIDR with no bits set past the prefix"
        ) {
            _ in true
        }
        let allowsLoopback = reader.boolean("PUSH_GATEWAY_WEBPUSH_ALLOW_LOOPBACK")
        let ca = reader.pemFile(
            "PUSH_GATEWAY_WEBPUSH_CA_FILE", label: "CERTIFICATE", problem: "must hold a PEM certificate")
        guard let rate, let connections, let nat64, let denied, let allowsLoopback else { return nil }
        return WebPushSettings(
            originRatePerSecond: Int(rate), maximumConnections: Int(connections), nat64Prefixes: nat64,
            deniedRanges: denied, allowsLoopback: allowsLoopback, extraTrustAnchorFile: ca?.path)
    }

    /// A comma list of CIDR blocks each `accepts`; empty when unset, nil (and a problem) when any
    /// item is refused.
    private static func ranges(
        _ reader: inout EnvironmentReader, _ name: String, _ expected: String, accepts: (IPAddressRange) -> Bool
    ) -> [IPAddressRange]? {
        guard reader.environment[name] != nil else { return [] }
        guard let text = reader.optional(name), let items = reader.commaList(name, text) else { return nil }
        var ranges: [IPAddressRange] = []
        for (index, item) in items.enumerated() {
            guard let range = IPAddressRange(item), accepts(range) else {
                reader.fail(name, "item \(index + 1) must be \(expected)")
                continue
            }
            ranges.append(range)
        }
        return ranges.count == items.count ? ranges : nil
    }
}

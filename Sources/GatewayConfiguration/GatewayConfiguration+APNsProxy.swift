import PushSystem

extension GatewayConfiguration {
    /// The egress proxy (docs/protocol.md §12): `PUSH_GATEWAY_EGRESS_PROXY`, or its older name
    /// `PUSH_GATEWAY_APNS_PROXY`, as `http://host:port`; unset for direct connections. Setting both
    /// is an error even when they agree, so an operator never wonders which one is read.
    /// `HTTPS_PROXY` is deliberately not read.
    static func egressProxy(_ reader: inout EnvironmentReader) -> EgressProxy? {
        let preferred = "PUSH_GATEWAY_EGRESS_PROXY"
        let older = "PUSH_GATEWAY_APNS_PROXY"
        let preferredText = reader.optional(preferred)
        let olderText = reader.optional(older)
        if preferredText != nil && olderText != nil {
            reader.fail(preferred, "is the same setting as \(older); set only one of them")
            return nil
        }
        guard let text = preferredText ?? olderText else { return nil }
        guard let proxy = EgressProxy(url: text) else {
            reader.fail(preferredText != nil ? preferred : older, "must be http://host:port")
            return nil
        }
        return proxy
    }
}

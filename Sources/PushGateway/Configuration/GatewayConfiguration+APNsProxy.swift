import PushHTTP2

extension GatewayConfiguration {
    /// `PUSH_GATEWAY_APNS_PROXY` (docs/protocol.md §12): `http://host:port`, or unset for direct
    /// connections. `HTTPS_PROXY` is deliberately not read.
    static func apnsProxy(_ reader: inout EnvironmentReader) -> HTTP2Proxy? {
        let name = "PUSH_GATEWAY_APNS_PROXY"
        guard let text = reader.optional(name) else { return nil }
        guard let proxy = HTTP2Proxy(url: text) else {
            reader.fail(name, "must be http://host:port")
            return nil
        }
        return proxy
    }
}

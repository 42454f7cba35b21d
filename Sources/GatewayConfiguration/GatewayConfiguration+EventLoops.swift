import PushSystem

extension GatewayConfiguration {
    static let eventLoopsVariable = "PUSH_GATEWAY_EVENT_LOOPS"

    /// `PUSH_GATEWAY_EVENT_LOOPS` (docs/protocol.md §12): event-loop threads serving the public
    /// listener, decimal digits in 1...1024; unset, the CPUs the process may use (its affinity mask,
    /// which is what a container's CPU set allows), docs/decisions/0470.
    static func eventLoopCount(_ reader: inout EnvironmentReader) -> Int? {
        reader.integer(eventLoopsVariable, in: 1...1024, default: Int64(EventLoopGroup.usableCPUCount())).map(Int.init)
    }
}

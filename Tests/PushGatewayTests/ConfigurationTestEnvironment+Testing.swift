import PushGateway
import PushTestSupport
import Testing

extension ConfigurationTestEnvironment {
    /// The configuration; records an issue with the errors when it does not parse.
    func configuration(sourceLocation: SourceLocation = #_sourceLocation) -> GatewayConfiguration? {
        switch parse() {
        case .success(let configuration): return configuration
        case .failure(let failure):
            Issue.record("configuration rejected: \(failure)", sourceLocation: sourceLocation)
            return nil
        }
    }
}

import GatewayAPI
public import PushErrors
import PushSystem

/// Why the gateway could not start (docs/decisions/0540): a listener that could not be set up, a
/// profile's push credentials that do not load, or another service that failed to start. The
/// description is what `serve` prints or logs; it names a listener, a variable, an address or a
/// profile, never key material.
public typealias GatewayError = DescribedError<GatewayErrorTag>

/// Makes `GatewayError` and its codes the gateway's own.
public enum GatewayErrorTag {}

extension GatewayError {
    /// A listener that could not be set up: names the listener, its variable and address, and the
    /// system's reason (docs/protocol.md §12).
    static func listener(_ listener: HTTPListener, address: String, underlying: SystemError) -> GatewayError {
        let variable = listener == .publicListener ? "PUSH_GATEWAY_LISTEN" : "PUSH_GATEWAY_HEALTH_LISTEN"
        return GatewayError(
            .listener,
            description: "cannot listen on the \(listener.rawValue) listener \(address) (\(variable)): \(underlying)")
    }

    /// A profile's push credentials could not be loaded.
    static func pushCredentials(profileID: String, problem: String) -> GatewayError {
        GatewayError(.pushCredentials, description: "profile \(profileID): \(problem)")
    }
}

extension ErrorCode<GatewayError> {
    /// A listener's address is refused or cannot be bound.
    public static var listener: Self { Self("listener") }

    /// A profile's APNs or FCM credentials are missing or do not load.
    public static var pushCredentials: Self { Self("pushCredentials") }

    /// Another long-running part (the reaper, the Marmot subscriber) failed to start; the
    /// description is that part's own error.
    public static var serviceStart: Self { Self("serviceStart") }
}

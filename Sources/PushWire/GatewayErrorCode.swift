/// The closed set of error codes of docs/protocol.md §1, the `error` of every error body: the
/// gateway answers with them and the client library decodes them, from this one list. The module
/// imports nothing, so an app links it with the client (docs/decisions/0370).
public enum GatewayErrorCode: String, Sendable, Equatable, CaseIterable {
    case invalidRequest = "invalid_request"
    case invalidAttestation = "invalid_attestation"
    case notAuthorized = "not_authorized"
    case invalidAuth = "invalid_auth"
    case invalidGrant = "invalid_grant"
    case rateLimited = "rate_limited"
    case temporarilyUnavailable = "temporarily_unavailable"
    case configurationFault = "configuration_fault"
    case notReady = "not_ready"
    case notFound = "not_found"
    case requestTimeout = "request_timeout"
}

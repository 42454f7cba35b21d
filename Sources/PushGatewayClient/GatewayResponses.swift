import Foundation
public import PushWire

/// A challenge of `POST /v1/installations/challenges` (docs/protocol.md §4.1): single-use, valid
/// 300 s from issue.
public struct Challenge: Sendable, Equatable, Decodable {
    /// `challenge_id`, a UUID.
    public let id: String
    /// `challenge`, 32 bytes as unpadded base64url.
    public let value: String
    /// The gateway's `expires_at` (Unix seconds by the gateway's clock).
    public let expiresAt: Int64

    /// How long a challenge lives (docs/protocol.md §4.1).
    public static let lifetimeSeconds: Int64 = 300

    private enum CodingKeys: String, CodingKey {
        case id = "challenge_id"
        case value = "challenge"
        case expiresAt = "expires_at"
    }
}

/// The `201` answer of an enrollment (docs/protocol.md §4.2).
public struct EnrollmentResponse: Sendable, Equatable, Decodable {
    public let installationHandle: String
    public let endpointEpoch: Int64
    public let expiresAt: Int64

    private enum CodingKeys: String, CodingKey {
        case installationHandle = "installation_handle"
        case endpointEpoch = "endpoint_epoch"
        case expiresAt = "expires_at"
    }
}

/// The `201` answer of a delegation (docs/protocol.md §4.3).
public struct DelegationResponse: Sendable, Equatable, Decodable {
    /// The opaque grant to hand to the relay.
    public let endpointGrant: String

    private enum CodingKeys: String, CodingKey { case endpointGrant = "endpoint_grant" }
}

/// The `200` answer of a rotation or a revocation: `{"status":"rotated"}` or `{"status":"revoked"}`.
public struct StatusResponse: Sendable, Equatable, Decodable {
    public let status: String
}

/// The `error` of an error body: every one of docs/protocol.md §1, from the list the gateway
/// answers with, named here so that an app needs no other import.
public typealias GatewayErrorCode = PushWire.GatewayErrorCode

/// An answer outside 2xx, as the gateway (or something in front of it) gave it.
public struct GatewayRejection: Error, Sendable, Equatable {
    public let status: Int
    /// The error body's code; nil when the body is not one of docs/protocol.md §1's error bodies
    /// (e.g. a reverse proxy's own error page).
    public let code: GatewayErrorCode?
    /// `Retry-After` in whole seconds, when the answer carried one as a number.
    public let retryAfterSeconds: Int?

    public init(status: Int, code: GatewayErrorCode?, retryAfterSeconds: Int?) {
        self.status = status
        self.code = code
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// Reads an answer outside 2xx.
    public init(_ response: HTTPResponse) {
        struct ErrorBody: Decodable { let error: String }
        let body = try? JSONDecoder().decode(ErrorBody.self, from: response.body)
        self.init(
            status: response.status, code: body.flatMap { GatewayErrorCode(rawValue: $0.error) },
            retryAfterSeconds: response.retryAfterSeconds)
    }
}

extension HTTPResponse {
    /// The body of a success with `expectedStatus`, decoded; a ``GatewayRejection`` for any answer
    /// outside 2xx; ``PushGatewayClientError/invalidResponse(status:)`` for a 2xx that is not the
    /// expected answer.
    public func decode<Answer: Decodable>(_ type: Answer.Type, expectedStatus: Int) throws -> Answer {
        guard (200..<300).contains(status) else { throw GatewayRejection(self) }
        guard status == expectedStatus, let answer = try? JSONDecoder().decode(type, from: body) else {
            throw PushGatewayClientError.invalidResponse(status: status)
        }
        return answer
    }
}

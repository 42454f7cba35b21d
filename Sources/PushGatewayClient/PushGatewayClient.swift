import Foundation

/// The app side of the push gateway (docs/ios-integration.md): enrolls this install with App Attest,
/// delegates to relays, rotates the device token and revokes, keeping its state in an
/// ``InstallationStateStore`` and following the guide's retry rules. An actor, so that two calls
/// never race on the stored state.
public actor PushGatewayClient {
    public struct Configuration: Sendable {
        /// The operator's `PUSH_GATEWAY_ORIGIN` (e.g. `https://push.buzz.xyz`): transcript audiences
        /// derive from it.
        public var origin: String
        /// The profile of this build (docs/ios-integration.md "Which profile").
        public var appProfile: String
        /// Where requests go when that is not the origin (a staging proxy, tests); nil sends them to
        /// the origin.
        public var serviceURL: URL?
        /// Seconds an enrollment asks for; at most the operator's maximum (90 days by default).
        public var installationLifetime: Int64
        /// ``PushGatewayClient/register(endpoint:)`` renews an installation this close to its expiry.
        public var renewalMargin: Int64
        /// Seconds a delegation asks for, cut to the installation's expiry; at most the operator's
        /// `PUSH_GATEWAY_MAX_GRANT_LIFETIME_SECONDS` (30 days by default).
        public var grantLifetime: Int64
        public var retry: RetryPolicy
        /// Unix seconds now.
        public var now: @Sendable () -> Int64

        public init(
            origin: String, appProfile: String, serviceURL: URL? = nil, installationLifetime: Int64 = 30 * 86_400,
            renewalMargin: Int64 = 7 * 86_400, grantLifetime: Int64 = 7 * 86_400, retry: RetryPolicy = RetryPolicy(),
            now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
        ) {
            self.origin = origin
            self.appProfile = appProfile
            self.serviceURL = serviceURL
            self.installationLifetime = installationLifetime
            self.renewalMargin = renewalMargin
            self.grantLifetime = grantLifetime
            self.retry = retry
            self.now = now
        }
    }

    /// What ``register(endpoint:)`` did.
    public struct Registration: Sendable, Equatable {
        public enum Change: Sendable, Equatable {
            /// The stored installation already holds this token.
            case unchanged
            /// A new installation (the first, after an expiry, a renewal or a lost key).
            case enrolled
            /// The stored installation moved to the new token.
            case rotated
        }

        public let change: Change
        public let installation: Installation
        /// Relays whose grant no longer works: delegate to each again and hand the new grants over.
        public let relaysToDelegateAgain: [String]
    }

    public let configuration: Configuration
    let appAttest: any AppAttestService
    let store: any InstallationStateStore
    let transport: any GatewayTransport

    public init(
        configuration: Configuration, appAttest: any AppAttestService, store: any InstallationStateStore,
        transport: any GatewayTransport = URLSessionTransport()
    ) {
        self.configuration = configuration
        self.appAttest = appAttest
        self.store = store
        self.transport = transport
    }

    /// The stored state.
    public func state() throws -> InstallationState { try store.load() }

    /// Forgets the stored installation, key and delegations without asking the gateway: after
    /// ``PushGatewayClientError/notAuthorized`` says the gateway no longer knows them.
    public func forget() throws { try store.save(InstallationState()) }

    /// The device token of `didRegisterForRemoteNotificationsWithDeviceToken` as the gateway wants
    /// it: lowercase hex.
    public static func endpoint(fromDeviceToken deviceToken: Data) -> String {
        deviceToken.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 0x10 ? "0" + hex : hex
        }.joined()
    }

    /// The one call an app makes at each launch with its current token: enrolls when nothing is
    /// stored or the installation expires within ``Configuration/renewalMargin`` (revoking the old
    /// one first), rotates when the token changed, else does nothing.
    public func register(endpoint: String) async throws -> Registration {
        try Self.checkEndpoint(endpoint)
        let state = try store.load()
        if let installation = state.installation,
            installation.expiresAt > configuration.now() + configuration.renewalMargin
        {
            guard installation.endpoint != endpoint || state.pendingRotation != nil else {
                return Registration(
                    change: .unchanged, installation: installation, relaysToDelegateAgain: state.relaysToDelegateAgain)
            }
            let relays = try await rotateEndpoint(to: endpoint)
            let rotated = try store.load().installation ?? installation
            return Registration(change: .rotated, installation: rotated, relaysToDelegateAgain: relays)
        }
        let relays = state.delegations.keys.sorted()
        if let installation = state.installation, installation.expiresAt > configuration.now() {
            do {
                try await revokeInstallation()
            } catch PushGatewayClientError.notAuthorized {
                // Already gone at the gateway: nothing to renew from.
                try store.save(InstallationState())
            }
        }
        let installation = try await enroll(endpoint: endpoint)
        return Registration(change: .enrolled, installation: installation, relaysToDelegateAgain: relays)
    }

    // MARK: - Shared by the calls

    /// A challenge and the local time until which it is safe to use: its 300 s less a margin for
    /// the request's own travel.
    struct IssuedChallenge {
        let challenge: Challenge
        let usableUntil: Int64
    }

    /// How one request ended.
    enum Exchange {
        /// A 2xx answer.
        case answered(HTTPResponse)
        /// Worth another attempt; `outcomeUnknown` when the gateway may have acted on it (no answer,
        /// `408`, a proxy's `502`/`504`).
        case transient(TransientFailure, outcomeUnknown: Bool)
        case refused(GatewayRejection)
    }

    func url(_ route: AppRoute) throws -> URL {
        let base = configuration.serviceURL?.absoluteString ?? configuration.origin
        let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
        guard let url = URL(string: trimmed + route.path) else {
            throw PushGatewayClientError.invalidArgument("origin")
        }
        return url
    }

    func exchange(_ route: AppRoute, _ body: Data) async throws -> Exchange {
        let response: HTTPResponse
        do {
            response = try await transport.post(try url(route), body: body)
        } catch let error as PushGatewayClientError {
            throw error
        } catch {
            try Task.checkCancellation()
            return .transient(.unavailable(retryAfterSeconds: nil), outcomeUnknown: true)
        }
        if (200..<300).contains(response.status) { return .answered(response) }
        let rejection = GatewayRejection(response)
        switch response.status {
        case 429: return .transient(.rateLimited(retryAfterSeconds: rejection.retryAfterSeconds), outcomeUnknown: false)
        case 503 where rejection.code == .temporarilyUnavailable:
            return .transient(.unavailable(retryAfterSeconds: rejection.retryAfterSeconds), outcomeUnknown: false)
        case 408, 502, 503, 504:
            return .transient(.unavailable(retryAfterSeconds: rejection.retryAfterSeconds), outcomeUnknown: true)
        default: return .refused(rejection)
        }
    }

    func challenge(_ budget: inout RetryBudget) async throws -> IssuedChallenge {
        while true {
            switch try await exchange(.challenge, LifecycleRequest.challengeBody) {
            case .answered(let response):
                let challenge = try response.decode(Challenge.self, expectedStatus: 200)
                return IssuedChallenge(
                    challenge: challenge, usableUntil: configuration.now() + Challenge.lifetimeSeconds - 30)
            case .transient(let failure, _): try await budget.wait(after: failure)
            case .refused(let rejection): throw PushGatewayClientError.rejected(rejection)
            }
        }
    }

    /// Whether to carry on after a `404 not_authorized` without counting it as a refusal (the call
    /// changed what it asks, e.g. the epoch).
    typealias NotAuthorizedStep = (_ earlierOutcomeUnknown: Bool) throws -> Bool

    /// One assertion call (docs/protocol.md §4.3–§4.6): each attempt takes a fresh challenge and a
    /// fresh assertion over the request `prepare` builds for it; transient failures are retried under
    /// the policy, a `404 not_authorized` once with a fresh challenge (docs/ios-integration.md).
    func assertionCall<Answer: Decodable>(
        _ route: AppRoute, keyID: String, expectedStatus: Int, _ answer: Answer.Type,
        prepare: (Challenge) throws -> LifecycleRequest, afterNotAuthorized: NotAuthorizedStep = { _ in false }
    ) async throws -> Answer {
        var budget = RetryBudget(configuration.retry)
        var refusals = 0
        var outcomeUnknown = false
        while true {
            let issued = try await challenge(&budget)
            let request = try prepare(issued.challenge)
            let assertion = try await assert(keyID, request.transcript(origin: configuration.origin).clientDataHash)
            switch try await exchange(route, request.body(proof: assertion)) {
            case .answered(let response):
                return try response.decode(answer, expectedStatus: expectedStatus)
            case .transient(let failure, let unknown):
                outcomeUnknown = outcomeUnknown || unknown
                try await budget.wait(after: failure)
            case .refused(let rejection) where rejection.status == 404 && rejection.code == .notAuthorized:
                if try afterNotAuthorized(outcomeUnknown) {
                    outcomeUnknown = false
                    continue
                }
                refusals += 1
                guard refusals < 2 else { throw PushGatewayClientError.notAuthorized }
            case .refused(let rejection): throw PushGatewayClientError.rejected(rejection)
            }
        }
    }

    /// An assertion; a lost key forgets the installation (docs/ios-integration.md "Key loss").
    func assert(_ keyID: String, _ clientDataHash: Data) async throws -> Data {
        do {
            return try await appAttest.generateAssertion(keyID, clientDataHash: clientDataHash)
        } catch AppAttestError.invalidKey {
            try store.save(InstallationState())
            throw PushGatewayClientError.keyLost
        } catch AppAttestError.unsupported {
            throw PushGatewayClientError.appAttestUnsupported
        }
    }

    /// The stored installation and its key, or ``PushGatewayClientError/notEnrolled``.
    func enrolledState() throws -> (InstallationState, Installation, keyID: String) {
        let state = try store.load()
        guard let installation = state.installation, let keyID = state.keyID,
            installation.expiresAt > configuration.now()
        else { throw PushGatewayClientError.notEnrolled }
        return (state, installation, keyID)
    }

    /// Device tokens are non-empty, even-length lowercase hex of at most 1024 characters (docs/protocol.md §1).
    static func checkEndpoint(_ endpoint: String) throws {
        guard !endpoint.isEmpty, endpoint.utf8.count <= 1024, endpoint.utf8.count % 2 == 0, isLowercaseHex(endpoint)
        else { throw PushGatewayClientError.invalidArgument("endpoint") }
    }

    /// Relay keys are 64 lowercase hex characters (docs/protocol.md §1).
    static func checkRelayPubkey(_ relayPubkey: String) throws {
        guard relayPubkey.utf8.count == 64, isLowercaseHex(relayPubkey) else {
            throw PushGatewayClientError.invalidArgument("relayPubkey")
        }
    }

    private static func isLowercaseHex(_ text: String) -> Bool {
        text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}

import Foundation
import PushTestSupport
import Synchronization
import Testing

@testable import PushGatewayClient

/// The retry rules of docs/ios-integration.md, against a scripted gateway.
@Suite("PushGatewayClient follows the guide's retry rules", .testBodyThreads)
struct RetryRuleTests {
    static let origin = "https://push.buzz.xyz"
    static let profile = "buzz-ios-production"

    let authority: SyntheticAppAttestAuthority
    let sleeps = RecordedSleeps()
    let store = InMemoryInstallationStateStore()

    init() throws { authority = try SyntheticAppAttestAuthority() }

    func client(
        _ transport: ScriptedTransport, _ service: SyntheticAppAttestService, maxAttempts: Int = 6,
        longestRetryAfter: TimeInterval = 60, now: @escaping @Sendable () -> Int64 = { 1_900_000_000 }
    ) -> PushGatewayClient {
        PushGatewayClient(
            configuration: .init(
                origin: Self.origin, appProfile: Self.profile,
                retry: sleeps.policy(maxAttempts: maxAttempts, longestRetryAfter: longestRetryAfter), now: now),
            appAttest: service, store: store, transport: transport)
    }

    /// A scripted gateway that answers every route well, except where `override` says otherwise.
    static func gateway(
        _ override: @escaping @Sendable (AppRoute, Int) -> ScriptedAnswer? = { _, _ in nil }
    ) -> ScriptedTransport {
        ScriptedTransport { path, index in
            let route = AppRoute(rawValue: path)!
            if let answer = override(route, index) { return answer }
            switch route {
            case .challenge: return .answer(Answers.challenge())
            case .enroll: return .answer(Answers.enrolled())
            case .delegate: return .answer(Answers.delegated())
            case .rotateEndpoint: return .answer(Answers.rotated())
            case .revokeDelegation, .revokeInstallation: return .answer(Answers.revoked())
            }
        }
    }

    /// Enrolls through a well-behaved scripted gateway, so that a test can start from an installation.
    func enrolled(_ service: SyntheticAppAttestService) async throws -> String {
        let endpoint = randomEndpoint()
        _ = try await client(Self.gateway(), service).enroll(endpoint: endpoint)
        return endpoint
    }

    @Test("a failure before Apple attested the key keeps the same key, also across calls")
    func sameKeyBeforeAttestation() async throws {
        let service = SyntheticAppAttestService(authority: authority)
        let endpoint = randomEndpoint()
        let unreachable = Self.gateway { route, _ in route == .challenge ? .dropRequest : nil }
        await #expect(throws: PushGatewayClientError.serverUnavailable(retryAfterSeconds: nil)) {
            try await client(unreachable, service, maxAttempts: 2).enroll(endpoint: endpoint)
        }
        #expect(service.generatedKeys.count == 1)
        #expect(try store.load().keyID == service.generatedKeys.first)
        #expect(try store.load().keyAttested == false)

        let flaky = Self.gateway { route, index in route == .challenge && index == 0 ? .dropRequest : nil }
        let installation = try await client(flaky, service).enroll(endpoint: endpoint)
        #expect(service.generatedKeys.count == 1)
        #expect(service.attestCalls.map(\.keyID) == service.generatedKeys)
        #expect(flaky.requests(to: .enroll).map { $0.string("key_id") } == [service.generatedKeys[0]])
        #expect(try store.load().installation == installation)
        #expect(sleeps.all == [1, 1])
    }

    @Test("Apple's serverUnavailable is retried with the same key and the same clientDataHash")
    func attestationServerUnavailable() async throws {
        let service = SyntheticAppAttestService(authority: authority)
        service.makeAttestationUnavailable(times: 2)
        let gateway = Self.gateway()
        _ = try await client(gateway, service).enroll(endpoint: randomEndpoint())
        #expect(service.generatedKeys.count == 1)
        #expect(service.attestCalls.count == 3)
        #expect(Set(service.attestCalls).count == 1)
        #expect(gateway.requests(to: .challenge).count == 1)
        #expect(gateway.requests(to: .enroll).count == 1)
        #expect(sleeps.all == [1, 2])
    }

    @Test(
        "a 503 is retried after a backoff with a fresh challenge and assertion; through every attempt it is serverUnavailable"
    )
    func temporarilyUnavailable() async throws {
        let service = SyntheticAppAttestService(authority: authority)
        _ = try await enrolled(service)
        let relay = scriptedRelay
        let once = Self.gateway { route, index in
            route == .delegate && index == 0 ? .answer(Answers.error(503, "temporarily_unavailable")) : nil
        }
        let grant = try await client(once, service).delegate(relayPubkey: relay)
        let sent = once.requests(to: .delegate)
        #expect(sent.count == 2)
        #expect(sent[0].string("challenge_id") != sent[1].string("challenge_id"))
        #expect(sent[0].string("assertion") != sent[1].string("assertion"))
        #expect(once.requests(to: .challenge).count == 2)
        #expect(try store.load().delegations[relay]?.grant == grant)
        #expect(sleeps.all == [1])

        let always = Self.gateway { route, _ in
            route == .delegate ? .answer(Answers.error(503, "temporarily_unavailable")) : nil
        }
        await #expect(throws: PushGatewayClientError.serverUnavailable(retryAfterSeconds: nil)) {
            try await client(always, service, maxAttempts: 4).delegate(relayPubkey: relay)
        }
        #expect(always.requests(to: .delegate).count == 4)
        #expect(sleeps.all == [1, 1, 2, 4])
        #expect(try store.load().delegations[relay]?.grant == grant)
    }

    @Test("a 429 waits its Retry-After; one longer than the policy allows ends in rateLimited at once")
    func rateLimited() async throws {
        let service = SyntheticAppAttestService(authority: authority)
        let limited = Self.gateway { route, index in
            route == .challenge && index == 0 ? .answer(Answers.error(429, "rate_limited", retryAfter: 7)) : nil
        }
        _ = try await client(limited, service).enroll(endpoint: randomEndpoint())
        #expect(limited.requests(to: .challenge).count == 2)
        #expect(sleeps.all == [7])

        let tooLong = Self.gateway { route, _ in
            route == .delegate ? .answer(Answers.error(429, "rate_limited", retryAfter: 3600)) : nil
        }
        await #expect(throws: PushGatewayClientError.rateLimited(retryAfterSeconds: 3600)) {
            try await client(tooLong, service).delegate(relayPubkey: scriptedRelay)
        }
        #expect(tooLong.requests(to: .delegate).count == 1)
        #expect(sleeps.all == [7])
    }

    @Test("after a 408, a 503 or no answer the attested enrollment is sent again as the same body")
    func enrollmentResentUnchanged() async throws {
        let service = SyntheticAppAttestService(authority: authority)
        let gateway = Self.gateway { route, index in
            guard route == .enroll else { return nil }
            switch index {
            case 0: return .answer(Answers.error(408, "request_timeout"))
            case 1: return .dropRequest
            case 2: return .answer(Answers.error(503, "temporarily_unavailable"))
            default: return nil
            }
        }
        _ = try await client(gateway, service).enroll(endpoint: randomEndpoint())
        let bodies = gateway.requests(to: .enroll).map(\.body)
        #expect(bodies.count == 4)
        #expect(Set(bodies).count == 1)
        #expect(service.generatedKeys.count == 1)
        #expect(service.attestCalls.count == 1)
        #expect(gateway.requests(to: .challenge).count == 1)
    }

    @Test(
        "an enrollment refused with 404 after Apple attested its key goes on with a new key; a second 404 is notAuthorized"
    )
    func enrollmentNotAuthorized() async throws {
        let service = SyntheticAppAttestService(authority: authority)
        let once = Self.gateway { route, index in
            route == .enroll && index == 0 ? .answer(Answers.error(404, "not_authorized")) : nil
        }
        _ = try await client(once, service).enroll(endpoint: randomEndpoint())
        #expect(service.generatedKeys.count == 2)
        #expect(once.requests(to: .enroll).map { $0.string("key_id") } == service.generatedKeys)
        #expect(try store.load().keyID == service.generatedKeys[1])

        try store.save(InstallationState())
        let always = Self.gateway { route, _ in route == .enroll ? .answer(Answers.error(404, "not_authorized")) : nil }
        await #expect(throws: PushGatewayClientError.notAuthorized) {
            try await client(always, service).enroll(endpoint: randomEndpoint())
        }
        #expect(always.requests(to: .enroll).count == 2)
        #expect(try store.load().installation == nil)
    }

    @Test("a lost delegation answer is retried with the next generation, saved before it was sent")
    func lostDelegationAnswer() async throws {
        let service = SyntheticAppAttestService(authority: authority)
        _ = try await enrolled(service)
        let gateway = Self.gateway { route, index in route == .delegate && index == 0 ? .dropRequest : nil }
        let grant = try await client(gateway, service).delegate(relayPubkey: scriptedRelay)
        #expect(gateway.requests(to: .delegate).map { $0.integer("generation") } == [1, 2])
        #expect(grant.generation == 2)
        #expect(try store.load().delegations[scriptedRelay] == RelayDelegation(lastSentGeneration: 2, grant: grant))
    }

    @Test("a 404 is retried once with a fresh challenge; the second is notAuthorized; a 400 is not retried")
    func refusals() async throws {
        let service = SyntheticAppAttestService(authority: authority)
        _ = try await enrolled(service)
        let notAuthorized = Self.gateway { route, _ in
            route == .revokeInstallation ? .answer(Answers.error(404, "not_authorized")) : nil
        }
        await #expect(throws: PushGatewayClientError.notAuthorized) {
            try await client(notAuthorized, service).revokeInstallation()
        }
        #expect(notAuthorized.requests(to: .revokeInstallation).count == 2)
        #expect(try store.load().installation != nil)

        let invalid = Self.gateway { route, _ in
            route == .delegate ? .answer(Answers.error(400, "invalid_request")) : nil
        }
        await #expect(
            throws: PushGatewayClientError.rejected(
                GatewayRejection(status: 400, code: .invalidRequest, retryAfterSeconds: nil))
        ) { try await client(invalid, service).delegate(relayPubkey: scriptedRelay) }
        #expect(invalid.requests(to: .delegate).count == 1)
        #expect(sleeps.all.isEmpty)
    }

    @Test("a lost rotation answer followed by a 404 rotates once more from the next epoch")
    func lostRotationAnswer() async throws {
        let service = SyntheticAppAttestService(authority: authority)
        _ = try await enrolled(service)
        _ = try await client(Self.gateway(), service).delegate(relayPubkey: scriptedRelay)
        let newEndpoint = randomEndpoint()
        let gateway = Self.gateway { route, index in
            guard route == .rotateEndpoint else { return nil }
            return [0: .dropRequest, 1: .answer(Answers.error(404, "not_authorized"))][index]
        }
        let relays = try await client(gateway, service).rotateEndpoint(to: newEndpoint)
        #expect(gateway.requests(to: .rotateEndpoint).map { $0.integer("endpoint_epoch") } == [1, 1, 2])
        #expect(relays == [scriptedRelay])
        let state = try store.load()
        #expect(state.installation?.endpointEpoch == 3)
        #expect(state.installation?.endpoint == newEndpoint)
        #expect(state.pendingRotation == nil)
        #expect(state.delegations[scriptedRelay]?.grant == nil)
        #expect(state.relaysToDelegateAgain == [scriptedRelay])
    }

    @Test("a rotation left without an answer is finished before the next call")
    func pendingRotationFinishedFirst() async throws {
        let service = SyntheticAppAttestService(authority: authority)
        _ = try await enrolled(service)
        let newEndpoint = randomEndpoint()
        let lost = Self.gateway { route, _ in route == .rotateEndpoint ? .dropRequest : nil }
        await #expect(throws: PushGatewayClientError.serverUnavailable(retryAfterSeconds: nil)) {
            try await client(lost, service, maxAttempts: 1).rotateEndpoint(to: newEndpoint)
        }
        #expect(try store.load().pendingRotation == PendingRotation(fromEpoch: 1, endpoint: newEndpoint))

        // The app was killed; at the next launch the gateway has the rotation.
        let gateway = Self.gateway { route, index in
            route == .rotateEndpoint && index == 0 ? .answer(Answers.error(404, "not_authorized")) : nil
        }
        let grant = try await client(gateway, service).delegate(relayPubkey: scriptedRelay)
        #expect(gateway.requests(to: .rotateEndpoint).map { $0.integer("endpoint_epoch") } == [1, 2])
        #expect(gateway.requests(to: .delegate).map { $0.integer("endpoint_epoch") } == [3])
        #expect(grant.endpointEpoch == 3)
        #expect(try store.load().installation?.endpoint == newEndpoint)
    }

    @Test("a revocation after a lost delegation answer tries the generation sent last, then the granted one")
    func revocationGenerations() async throws {
        let service = SyntheticAppAttestService(authority: authority)
        _ = try await enrolled(service)
        let granted = try await client(Self.gateway(), service).delegate(relayPubkey: scriptedRelay)
        let lost = Self.gateway { route, _ in route == .delegate ? .dropRequest : nil }
        await #expect(throws: PushGatewayClientError.serverUnavailable(retryAfterSeconds: nil)) {
            try await client(lost, service, maxAttempts: 1).delegate(relayPubkey: scriptedRelay)
        }
        #expect(try store.load().delegations[scriptedRelay] == RelayDelegation(lastSentGeneration: 2, grant: granted))

        let gateway = Self.gateway { route, index in
            route == .revokeDelegation && index == 0 ? .answer(Answers.error(404, "not_authorized")) : nil
        }
        try await client(gateway, service).revokeDelegation(relayPubkey: scriptedRelay)
        #expect(gateway.requests(to: .revokeDelegation).map { $0.integer("generation") } == [2, 1])
        #expect(try store.load().delegations[scriptedRelay] == RelayDelegation(lastSentGeneration: 2, grant: nil))
        let next = try await client(Self.gateway(), service).delegate(relayPubkey: scriptedRelay)
        #expect(next.generation == 3)
    }

    @Test("a lost App Attest key forgets the installation; unsupported App Attest sends nothing")
    func appAttestFailures() async throws {
        let service = SyntheticAppAttestService(authority: authority)
        _ = try await enrolled(service)
        service.loseKey(try #require(try store.load().keyID))
        await #expect(throws: PushGatewayClientError.keyLost) {
            try await client(Self.gateway(), service).delegate(relayPubkey: scriptedRelay)
        }
        #expect(try store.load() == InstallationState())

        let unsupported = SyntheticAppAttestService(authority: authority, isSupported: false)
        let gateway = Self.gateway()
        await #expect(throws: PushGatewayClientError.appAttestUnsupported) {
            try await client(gateway, unsupported).enroll(endpoint: randomEndpoint())
        }
        #expect(gateway.requests.isEmpty)
    }

    @Test("bad arguments and a missing installation are refused before any request")
    func refusedLocally() async throws {
        let service = SyntheticAppAttestService(authority: authority)
        let gateway = Self.gateway()
        let client = client(gateway, service)
        for endpoint in ["", "ABCD", "abc", String(repeating: "ab", count: 513)] {
            await #expect(throws: PushGatewayClientError.invalidArgument("endpoint")) {
                try await client.register(endpoint: endpoint)
            }
        }
        await #expect(throws: PushGatewayClientError.invalidArgument("relayPubkey")) {
            try await client.delegate(relayPubkey: String(repeating: "A", count: 64))
        }
        await #expect(throws: PushGatewayClientError.notEnrolled) {
            try await client.delegate(relayPubkey: scriptedRelay)
        }
        await #expect(throws: PushGatewayClientError.notEnrolled) { try await client.revokeInstallation() }
        #expect(gateway.requests.isEmpty)
        _ = try await client.enroll(endpoint: randomEndpoint())
        await #expect(throws: PushGatewayClientError.unknownRelay) {
            try await client.revokeDelegation(relayPubkey: scriptedRelay)
        }
        await #expect(throws: PushGatewayClientError.alreadyEnrolled) {
            try await client.enroll(endpoint: randomEndpoint())
        }
    }

    @Test("register enrolls, does nothing for the same token, rotates for a new one and renews near the expiry")
    func register() async throws {
        let service = SyntheticAppAttestService(authority: authority)
        let clock = LockedClock(1_900_000_000)
        let gateway = Self.gateway { route, _ in
            route == .enroll ? .answer(Answers.enrolled(expiresAt: clock.now + 30 * 86_400)) : nil
        }
        let client = client(gateway, service, now: { clock.now })
        let first = randomEndpoint()
        let enrolled = try await client.register(endpoint: first)
        #expect(enrolled.change == .enrolled && enrolled.relaysToDelegateAgain.isEmpty)
        _ = try await client.delegate(relayPubkey: scriptedRelay)
        let same = try await client.register(endpoint: first)
        #expect(same.change == .unchanged && same.installation == enrolled.installation)
        #expect(same.relaysToDelegateAgain.isEmpty)
        #expect(gateway.requests(to: .rotateEndpoint).isEmpty)

        let second = randomEndpoint()
        let rotated = try await client.register(endpoint: second)
        #expect(rotated.change == .rotated)
        #expect(rotated.installation.endpoint == second && rotated.installation.endpointEpoch == 2)
        #expect(rotated.relaysToDelegateAgain == [scriptedRelay])

        clock.advance(24 * 86_400)
        let renewed = try await client.register(endpoint: second)
        #expect(renewed.change == .enrolled)
        #expect(renewed.relaysToDelegateAgain == [scriptedRelay])
        #expect(gateway.requests(to: .revokeInstallation).count == 1)
        #expect(gateway.requests(to: .enroll).count == 2)
        #expect(service.generatedKeys.count == 2)
        #expect(renewed.installation.handle != enrolled.installation.handle)
    }

    @Test("backoff doubles from the initial delay up to the maximum; jitter stays in the upper half")
    func backoff() {
        let policy = RetryPolicy(initialDelay: 1, maximumDelay: 10, jitter: false)
        #expect((1...6).map { policy.delay(beforeRetry: $0, retryAfterSeconds: nil) } == [1, 2, 4, 8, 10, 10])
        #expect(policy.delay(beforeRetry: 3, retryAfterSeconds: 30) == 30)
        let jittered = RetryPolicy(initialDelay: 1, maximumDelay: 10, jitter: true)
        for _ in 0..<100 { #expect((2...4).contains(jittered.delay(beforeRetry: 3, retryAfterSeconds: nil))) }
    }
}

/// A clock a test moves.
final class LockedClock: Sendable {
    private let seconds: Atomic<Int64>

    init(_ seconds: Int64) { self.seconds = Atomic(seconds) }

    var now: Int64 { seconds.load(ordering: .acquiring) }

    func advance(_ delta: Int64) { seconds.add(delta, ordering: .acquiringAndReleasing) }
}

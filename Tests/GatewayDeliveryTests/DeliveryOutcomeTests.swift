import GatewayAPI
import GatewayCredentials
import PushDelivery
import PushNostr
import PushTestSupport
import Testing

@testable import GatewayDelivery

/// docs/protocol.md §4.7 after the push, per neutral outcome: the result and the bookkeeping it
/// leaves in the admissions (reservation kept or released, epoch marked dead), and the admission's
/// own refusals, all without a database.
@Suite("Delivery outcomes without a database: each result and the bookkeeping it leaves", .testBodyThreads)
struct DeliveryOutcomeTests {
    /// Delivers once through a harness whose push service answers `outcome`, with the bookkeeping's
    /// worker run, and returns the harness, the delivery and its result.
    static func deliver(answering outcome: PushOutcome) throws -> (PipelineHarness, DeliveryRequest, DeliveryResult?) {
        let harness = try PipelineHarness([outcome])
        let delivery = try harness.delivery()
        let answer = harness.deliver(delivery)
        harness.workers.runQueued()
        return (harness, delivery, answer.value)
    }

    @Test("accepted: 200 accepted, the reservation kept, no bookkeeping write")
    func acceptedKeepsReservation() throws {
        let (harness, delivery, result) = try Self.deliver(answering: .accepted)
        #expect(result == .accepted)
        #expect(harness.isReserved(delivery))
        #expect(harness.admissions.releaseCalls == 0 && harness.admissions.markDeadCalls == 0)
        #expect(harness.provider.wakes.map(\.requestID) == [delivery.requestID.text])
    }

    @Test(
        "endpoint dead: 410 with the grant's generation and invalid_at, the reservation kept, the grant's epoch marked dead"
    )
    func endpointDeadMarksEpoch() throws {
        let (harness, delivery, result) = try Self.deliver(answering: .endpointDead(invalidAtSeconds: 1_700_000_123))
        #expect(
            result == .invalidEndpoint(generation: PipelineHarness.generation, invalidAtSeconds: 1_700_000_123))
        #expect(
            harness.admissions.deadMarks == [
                InMemoryAdmissions.DeadMark(
                    installationHandle: PipelineHarness.installationHandle, epoch: PipelineHarness.endpointEpoch,
                    invalidAtSeconds: 1_700_000_123)
            ])
        #expect(harness.isReserved(delivery))
        #expect(harness.admissions.releaseCalls == 0)
    }

    @Test("endpoint dead without invalid_at: 410 with invalid_at null, the epoch marked dead with none")
    func endpointDeadWithoutTimestamp() throws {
        let (harness, _, result) = try Self.deliver(answering: .endpointDead(invalidAtSeconds: nil))
        #expect(result == .invalidEndpoint(generation: PipelineHarness.generation, invalidAtSeconds: nil))
        #expect(harness.admissions.deadMarks.map(\.invalidAtSeconds) == [nil])
    }

    @Test("retry: 503 retry with the service's Retry-After seconds, the reservation released")
    func retryReleasesReservation() throws {
        let (harness, delivery, result) = try Self.deliver(answering: .retry(retryAfterSeconds: 30))
        #expect(result == .retry(retryAfterSeconds: 30))
        #expect(!harness.isReserved(delivery))
        #expect(harness.admissions.releaseCalls == 1 && harness.admissions.markDeadCalls == 0)
    }

    @Test("configuration fault: 503 configuration_fault, the reservation released, whatever the fault")
    func configurationFaultReleasesReservation() throws {
        for fault in ConfigurationFault.allCases {
            let (harness, delivery, result) = try Self.deliver(answering: .configurationFault(fault))
            #expect(result == .configurationFault, "\(fault)")
            #expect(!harness.isReserved(delivery), "\(fault)")
            #expect(harness.admissions.markDeadCalls == 0, "\(fault)")
        }
    }

    @Test("permanent request fault: 400 invalid_request, the reservation kept (a terminal outcome), no write")
    func permanentRequestFaultKeepsReservation() throws {
        let (harness, delivery, result) = try Self.deliver(answering: .permanentRequestFault)
        #expect(result == .invalidRequest)
        #expect(harness.isReserved(delivery))
        #expect(harness.admissions.releaseCalls == 0 && harness.admissions.markDeadCalls == 0)
    }

    @Test("a profile without a push service: configuration_fault (missing credentials), the reservation released")
    func missingProviderReleasesReservation() throws {
        let harness = try PipelineHarness(providers: false)
        try expectConfigurationFaultWithoutPush(harness)
    }

    @Test("a stored token the token keyring cannot open: configuration_fault, no push, the reservation released")
    func unopenableCustodyReleasesReservation() throws {
        let harness = try PipelineHarness(decide: { _, _ in
            .admitted(
                AdmittedDelivery(
                    installationHandle: PipelineHarness.installationHandle, sealedToken: Array("t9.AAAA".utf8),
                    provider: "apns"))
        })
        try expectConfigurationFaultWithoutPush(harness)
    }

    @Test(
        "an installation enrolled under another provider than its profile names now: configuration_fault, no push, the reservation released"
    )
    func storedProviderOtherThanTheProfilesIsAConfigurationFault() throws {
        for stored in ["fcm", "webpush"] {
            let harness = try PipelineHarness(decide: { _, admitted in
                .admitted(
                    AdmittedDelivery(
                        installationHandle: admitted.installationHandle, sealedToken: admitted.sealedToken,
                        provider: stored))
            })
            try expectConfigurationFaultWithoutPush(harness)
            #expect(
                harness.logs.lines(saying: "installation enrolled under another provider than its profile's").count == 1
            )
        }
    }

    @Test("the push goes out with the opened device token, the request id and the delivery's expiry")
    func wakeCarriesTheDelivery() throws {
        let (harness, delivery, _) = try Self.deliver(answering: .accepted)
        let wake = try #require(harness.provider.wakes.first)
        #expect(wake.deviceToken == PipelineHarness.deviceToken)
        #expect(wake.profileID == PipelineHarness.profileID && wake.style == .reconnect)
        #expect(wake.requestID == delivery.requestID.text && wake.expiresAt == delivery.expiresAt)
    }

    // MARK: The admission's refusals

    @Test("an admission refused: 404 invalid_grant, no push, no bookkeeping")
    func refusedAdmission() throws {
        let harness = try PipelineHarness(decide: { _, _ in .refused })
        let answer = harness.deliver(try harness.delivery())
        #expect(answer.value == .invalidGrant)
        #expect(harness.provider.wakes.isEmpty)
        #expect(harness.workers.handOvers == 0)
        #expect(harness.admissions.releaseCalls == 0 && harness.admissions.markDeadCalls == 0)
    }

    @Test("an admission the database found late: 408, no push")
    func lateAdmission() throws {
        let harness = try PipelineHarness(decide: { _, _ in .late })
        let answer = harness.deliver(try harness.delivery())
        #expect(answer.value == .requestTimeout)
        #expect(harness.provider.wakes.isEmpty)
    }

    @Test(
        "a dead endpoint at admission: 410 with the stored invalid_at and the grant's generation, without a push or a new mark"
    )
    func deadEndpointAtAdmission() throws {
        let harness = try PipelineHarness(decide: { _, _ in .deadEndpoint(invalidAtSeconds: 1_690_000_000) })
        let answer = harness.deliver(try harness.delivery())
        #expect(
            answer.value == .invalidEndpoint(generation: PipelineHarness.generation, invalidAtSeconds: 1_690_000_000))
        #expect(harness.provider.wakes.isEmpty)
        #expect(harness.admissions.markDeadCalls == 0)
    }

    @Test("an admission transaction that fails for storage reasons: 503 temporarily_unavailable, no push")
    func failedAdmission() throws {
        let harness = try PipelineHarness()
        harness.admissions.failAdmissions()
        let answer = harness.deliver(try harness.delivery())
        #expect(answer.value == .temporarilyUnavailable)
        #expect(harness.provider.wakes.isEmpty)
    }

    @Test("a grant sealed for another relay than the signer: invalid_grant before any admission")
    func grantOfAnotherRelay() throws {
        let harness = try PipelineHarness()
        let signer = try #require(SchnorrSigningKey(secretKey: [UInt8](repeating: 0x43, count: 32))).publicKey
        let answer = Answer<DeliveryResult>()
        harness.pipeline.deliver(try harness.delivery(), harness.context(signer: signer), completion: answer.give)
        #expect(answer.value == .invalidGrant)
        #expect(harness.admissions.transactions == 0)
        #expect(harness.provider.wakes.isEmpty)
    }
}

/// A delivery refused before any push: 503 configuration_fault, nothing sent to the provider, the
/// reservation released so the relay may retry (docs/protocol.md §4.7).
private func expectConfigurationFaultWithoutPush(
    _ harness: PipelineHarness, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let delivery = try harness.delivery()
    let answer = harness.deliver(delivery)
    harness.workers.runQueued()
    #expect(answer.value == .configurationFault, sourceLocation: sourceLocation)
    #expect(!harness.isReserved(delivery), sourceLocation: sourceLocation)
    #expect(harness.provider.wakes.isEmpty, sourceLocation: sourceLocation)
}

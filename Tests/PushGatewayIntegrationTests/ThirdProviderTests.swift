import Foundation
import GatewayConfiguration
import GatewayCredentials
import PushCrypto
import PushDelivery
import PushMetrics
import PushNostr
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import PushGateway
@testable import PushGatewayCommands

/// A push provider that exists only in this file: the proof that the delivery core is open
/// (docs/decisions/0770). It serves android profiles whose `…_PROVIDER` is `fake`, reads its one
/// setting from `…_FAKE_CHANNEL`, takes endpoints `fake:<1..64 of a-z 0-9>`, counts its requests in
/// `push_gateway_fake_requests_total` and accepts every wake, remembering it.
struct FakeProviderModule: PushProviderModule {
    static let fake = PushService(rawValue: "fake")

    /// Every wake any provider of this module was handed, in order.
    let wakes = FakeWakes()

    var service: PushService { Self.fake }
    var platform: AppProfile.Platform { .android }
    var displayName: String { "Fake" }
    var endpointSyntax: String { "fake:<1 to 64 of a-z 0-9>" }

    func endpoint(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        guard text.hasPrefix("fake:"), (6...69).contains(bytes.count),
            bytes.dropFirst(5).allSatisfy({ (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) })
        else { return nil }
        return bytes
    }

    func reasonLabel(_ report: PushReport) -> String? { report.status.map(String.init) }

    func makeMetrics(profileIDs: [String]) -> any PushProviderMetrics { FakeProviderMetrics() }

    func makeProvider(
        profiles: [AppProfile], configuration: GatewayConfiguration, runtime: Runtime
    ) throws(PushProviderStartError) -> any PushProvider {
        for profile in profiles where profile.providerValues["FAKE_CHANNEL"] == nil {
            throw PushProviderStartError(profileID: profile.id, problem: "no FAKE_CHANNEL")
        }
        return FakePushProvider(wakes: wakes)
    }

    func describe(_ profile: AppProfile) -> String {
        "fake channel \(profile.providerValues["FAKE_CHANNEL"] ?? "none")"
    }
}

final class FakeWakes: Sendable {
    private let wakes = Mutex<[PushWake]>([])

    func append(_ wake: PushWake) { wakes.withLock { $0.append(wake) } }
    var all: [PushWake] { wakes.withLock { $0 } }
}

struct FakePushProvider: PushProvider {
    let wakes: FakeWakes

    var service: PushService { FakeProviderModule.fake }

    func submit(_ wake: PushWake, completion: @escaping @Sendable (PushReport) -> Void) {
        wakes.append(wake)
        completion(
            PushReport(
                outcome: .accepted, service: service, requestOutcome: .accepted, requests: 1, status: 200,
                reason: nil, sendDuration: .milliseconds(1)))
    }

    func shutdown() {}
}

final class FakeProviderMetrics: PushProviderMetrics {
    let requests = CounterFamily(
        name: "push_gateway_fake_requests_total", help: "Fake requests, by outcome.", labelNames: ["outcome"],
        series: PushRequestOutcome.allCases.map { [$0.rawValue] })

    var families: [any MetricFamily] { [requests] }

    func record(_ report: PushReport, profile: String) {
        if let outcome = report.requestOutcome {
            requests.add(UInt64(report.requests), labelValues: [outcome.rawValue])
        }
    }
}

@Suite(
    "A provider defined only in a test file delivers end to end (docs/decisions/0770)", .tags(.postgres),
    .testBodyThreads)
struct ThirdProviderTests {
    static let profile = ConfigurationTestEnvironment.androidProfile
    static let key = "PUSH_GATEWAY_PROFILE_BUZZ_ANDROID_"

    /// The android profile switched to the fake provider: FCM's variables off, its own on.
    static func fakeProfile(_ environment: ConfigurationTestEnvironment) -> ConfigurationTestEnvironment {
        environment.with(key + "FCM_PROJECT_ID", nil).with(key + "FCM_SERVICE_ACCOUNT_FILE", nil)
            .with(key + "PROVIDER", "fake").with(key + "FAKE_CHANNEL", "blue")
    }

    @Test(
        "enroll with a fake endpoint, delegate, then /v1/deliveries, /v1/deliveries/batch and send-test-push all reach the fake provider; its family and fake_request stage move"
    )
    func fakeProviderDelivers() throws {
        let module = FakeProviderModule()
        // The registration line: the standard modules and the fake one.
        let modules = PushProviderModules(PushProviderModules.standard.all + [module])
        let android = try AndroidLifecycleGateway(providers: .registering(modules)) { Self.fakeProfile($0) }
        let lifecycle = android.lifecycle

        // The profile's provider decides the endpoint syntax: an FCM token is refused, a fake one enrolls.
        let device = try android.makeDevice()
        let now = lifecycle.clock.unixSeconds()
        let refused = try android.post(
            AndroidLifecycleGateway.path,
            try device.enrollBody(challenge: try lifecycle.challenge(), expiresAt: now + 86_400))
        #expect(refused.status == 400, "\(refused.bodyText)")
        let endpoint = "fake:device7"
        let enrolled = try android.post(
            AndroidLifecycleGateway.path,
            try device.enrollBody(challenge: try lifecycle.challenge(), expiresAt: now + 86_400, endpoint: endpoint))
        try #require(enrolled.status == 201, "\(enrolled.bodyText)")
        device.handle = try lifecycleObject(enrolled)["installation_handle"] as? String
        let handle = try #require(device.handle)
        let stored = try lifecycle.query("SELECT provider FROM installations WHERE handle = $1::uuid", [.text(handle)])
        #expect(try stored.string(row: 0, column: 0) == "fake")

        let relay = DeliveryTestGateway.randomRelayKey()
        let delegated = try android.post(
            "/v1/delegations",
            try device.delegateBody(
                challenge: try lifecycle.challenge(), relay: relay.publicKey.hex, generation: 1, notBefore: now,
                expiresAt: now + 3600))
        try #require(delegated.status == 201, "\(delegated.bodyText)")
        let grant = try #require(try lifecycleObject(delegated)["endpoint_grant"] as? String)

        let client = DeliveryClient(port: lifecycle.server.publicPort)
        let expiresAt = DeliveryTestGateway.now() + 120
        let single = DeliveryTestGateway.body(
            grant: grant, requestID: try CanonicalUUID.version4(), expiresAt: expiresAt)
        let singleAuthorization = try DeliveryTestGateway.authorization(
            key: relay, url: "http://\(FCMDeliveryGateway.host)/v1/deliveries", body: single)
        let delivered = try client.post(
            body: single, headers: ["Authorization: \(singleAuthorization)"], path: "/v1/deliveries")
        #expect(delivered.status == 200, "\(delivered.bodyText)")
        #expect(delivered.bodyText == #"{"status":"accepted"}"#)

        let batch = DeliveryClient.batchBody([try BatchTestItem(grant: grant)], expiresAt: expiresAt)
        let batchAuthorization = try DeliveryTestGateway.authorization(
            key: relay, url: "http://\(FCMDeliveryGateway.host)/v1/deliveries/batch", body: batch)
        let batched = try client.post(
            body: batch, headers: ["Authorization: \(batchAuthorization)"], path: "/v1/deliveries/batch")
        expectBatchResults(batched, [BatchResult.accepted])

        // Both wakes reached the fake provider with the enrolled endpoint's bytes, opened from custody.
        let wakes = module.wakes.all
        try #require(wakes.count == 2)
        #expect(wakes.allSatisfy { $0.deviceToken == Array(endpoint.utf8) && $0.profileID == Self.profile })
        #expect(wakes.allSatisfy { $0.style == .reconnect && $0.expiresAt == expiresAt })

        // An installation stored under another provider than its profile's now: 503, nothing sent.
        _ = try lifecycle.query("UPDATE installations SET provider = 'fcm' WHERE handle = $1::uuid", [.text(handle)])
        let moved = DeliveryTestGateway.body(
            grant: grant, requestID: try CanonicalUUID.version4(), expiresAt: expiresAt)
        let movedAuthorization = try DeliveryTestGateway.authorization(
            key: relay, url: "http://\(FCMDeliveryGateway.host)/v1/deliveries", body: moved)
        let refusedMove = try client.post(
            body: moved, headers: ["Authorization: \(movedAuthorization)"], path: "/v1/deliveries")
        #expect(refusedMove.status == 503, "\(refusedMove.bodyText)")
        #expect(refusedMove.bodyText == #"{"error":"configuration_fault"}"#)
        #expect(module.wakes.all.count == 2)

        let metrics = try lifecycle.gateway.get("/metrics").bodyText
        #expect(metrics.contains("push_gateway_fake_requests_total{outcome=\"accepted\"} 2\n"))
        #expect(metrics.contains("push_gateway_stage_duration_seconds_count{stage=\"fake_request\"} 2\n"))
        #expect(metrics.contains("push_gateway_delivery_admissions_total{result=\"accepted\"} 2\n"))

        // send-test-push with the same registration: the fake module's syntax and description.
        let environment = Self.fakeProfile(
            try ConfigurationTestEnvironment().withAndroidProfile(authority: android.authority))
        let pushed = SendTestPushCommand.execute(
            arguments: ["--profile", Self.profile, "--endpoint", "fake:probe1"], environment: environment.variables,
            now: DeliveryTestGateway.now(), modules: modules)
        #expect(pushed.exitCode == 0, "\(pushed.standardError)")
        #expect(
            pushed.standardOutput
                == "profile buzz-android: fake channel blue\n"
                + "Fake answered 200: accepted (the credentials, topic and environment work for this token)\n")
        #expect(module.wakes.all.last?.deviceToken == Array("fake:probe1".utf8))
        let badSyntax = SendTestPushCommand.execute(
            arguments: ["--profile", Self.profile, "--endpoint", "dK3:APA91b"], environment: environment.variables,
            now: DeliveryTestGateway.now(), modules: modules)
        #expect(badSyntax.exitCode == 2)
        #expect(
            badSyntax.standardError == "push-gateway send-test-push: --endpoint must be fake:<1 to 64 of a-z 0-9>\n")
    }

    @Test(
        "without the fake module registered, a profile naming it is refused by serve's provider check and check-config")
    func unregisteredProviderRefused() throws {
        let environment = Self.fakeProfile(
            try ConfigurationTestEnvironment().withAndroidProfile(authority: try SyntheticKeyAttestationAuthority()))
        let configuration = try GatewayConfiguration(environment: environment.variables)
        let problems = StartupChecks.problems(configuration)
        #expect(
            problems.map(\.description) == [
                Self.key + "PROVIDER: names a provider this build does not have (apns, fcm, webpush)"
            ])
        let runtime = try TestRuntime()
        #expect(throws: GatewayError.self) {
            try PushProviders.make(configuration: configuration, runtime: runtime.runtime)
        }
        let checked = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(checked.exitCode == 1)
        #expect(checked.standardError.contains(Self.key + "PROVIDER: names a provider this build does not have"))
    }
}

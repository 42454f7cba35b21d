import Foundation
import PushCrypto
import PushMetrics
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import PushGateway
@testable import PushGatewayCommands

extension ConfigurationTestEnvironment {
    /// The certificate-auth profile these tests add next to the token-auth one.
    static let certificateProfile = "buzz-ios-cert"
    static let certificateVariable = "PUSH_GATEWAY_PROFILE_BUZZ_IOS_CERT_APNS_CERT_FILE"

    /// Adds `buzz-ios-cert`, authenticated by a real self-signed certificate valid until `notAfter`.
    func withCertificateProfile(notAfter: Int64) throws -> ConfigurationTestEnvironment {
        let key = try P256PrivateKey.generate()
        let certificate = try X509CertificateBuilder(
            subjectCommonName: "Apple Push Services: xyz.buzz.cert", serialNumber: 7,
            notBefore: notAfter - 86_400 * 400,
            notAfter: notAfter, extensions: []
        ).issue(subjectKey: key.publicKey, issuer: nil, issuerKey: key)
        let pem =
            "-----BEGIN CERTIFICATE-----\n" + Base64.encode(certificate.derEncoded) + "\n-----END CERTIFICATE-----\n"
            + (try key.pkcs8PEM())
        let prefix = "PUSH_GATEWAY_PROFILE_BUZZ_IOS_CERT_"
        return with("PUSH_GATEWAY_PROFILES", (variables["PUSH_GATEWAY_PROFILES"] ?? "") + "," + Self.certificateProfile)
            .with(prefix + "APP_ID", "ABCDE12345.xyz.buzz.cert").with(prefix + "APNS_TOPIC", "xyz.buzz.cert")
            .with(prefix + "APNS_ENVIRONMENT", "sandbox")
            .with(Self.certificateVariable, try write("apns-cert.pem", pem))
    }
}

@Suite(
    "APNs certificates: expiry is an error, a near one a warning, and every one a metric", .tags(.process),
    .testBodyThreads)
struct CertificateExpiryTests {
    static let now = SystemWallClock().unixSeconds()

    @Test("an expired APNs certificate is a configuration error in check-config and serve")
    func expiredIsAnError() throws {
        let environment = try ConfigurationTestEnvironment().withCertificateProfile(notAfter: 1_580_000_000)
        let checked = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(checked.exitCode == 1)
        #expect(
            checked.standardError.contains(
                "push-gateway check-config: configuration error: \(ConfigurationTestEnvironment.certificateVariable): "
                    + "the APNs certificate has expired"))
        let serve = try GatewayBinary.run(["serve"], environment: environment.variables)
        #expect(serve.exitCode == 1)
        #expect(serve.standardError.contains("push-gateway serve: configuration error: "))
        #expect(serve.standardError.contains("the APNs certificate has expired"))
    }

    @Test("a certificate that expires within 30 days is a warning in check-config, and still ok")
    func soonIsAWarning() throws {
        let environment = try ConfigurationTestEnvironment().withCertificateProfile(notAfter: Self.now + 10 * 86_400)
        let checked = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(checked.exitCode == 0)
        #expect(checked.standardOutput.hasPrefix("configuration ok\n"))
        #expect(
            checked.standardError
                == "push-gateway check-config: warning: \(ConfigurationTestEnvironment.certificateVariable): the APNs "
                + "certificate of profile buzz-ios-cert expires in 9 days\n"
                || checked.standardError
                    == "push-gateway check-config: warning: \(ConfigurationTestEnvironment.certificateVariable): the "
                    + "APNs certificate of profile buzz-ios-cert expires in 10 days\n"
        )
        // serve logs the same warnings at start.
        let configuration = try #require(environment.configuration())
        let startWarnings = StartupChecks.warnings(configuration, environment: environment.variables)
        #expect(startWarnings.count == 1 && startWarnings[0].contains("profile buzz-ios-cert expires in"))
        let later = try ConfigurationTestEnvironment().withCertificateProfile(notAfter: Self.now + 60 * 86_400)
        #expect(CheckConfigCommand.execute(arguments: [], environment: later.variables).standardError == "")
    }

    @Test("the daily check warns about a certificate within 30 days with its profile and days left")
    func dailyWarning() throws {
        let environment = try ConfigurationTestEnvironment().withCertificateProfile(notAfter: Self.now + 5 * 86_400)
        let configuration = try #require(environment.configuration())
        let log = CapturedLog()
        let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: 4)
        defer { runtime.shutdown() }
        CertificateWarnings(configuration: configuration, logger: log.logger, timersOn: runtime.loops.next()).warnNow()
        let lines = log.lines("APNs certificate expires soon")
        #expect(lines.count == 1)
        #expect(lines.first?.contains(#""profile":"buzz-ios-cert""#) == true)
        #expect(lines.first?.contains(#""days_left":4"#) == true || lines.first?.contains(#""days_left":5"#) == true)
    }

    @Test(
        "the daily check runs from a timer on the runtime's loop once a day until stop, which leaves the loop running")
    func dailyCheckOnTheLoop() throws {
        let environment = try ConfigurationTestEnvironment().withCertificateProfile(notAfter: Self.now + 5 * 86_400)
        let configuration = try #require(environment.configuration())
        let log = CapturedLog()
        // A manual loop: this thread runs it, and its virtual time decides when a day has passed.
        let loop = try EventLoop(manual: ManualClock())
        defer { loop.shutdown() }
        let warnings = CertificateWarnings(configuration: configuration, logger: log.logger, timersOn: loop)
        warnings.start()
        loop.advance(by: CertificateWarnings.checkInterval - .seconds(1))
        #expect(log.lines("APNs certificate expires soon").isEmpty)
        loop.advance(by: .seconds(1))
        #expect(log.lines("APNs certificate expires soon").count == 1)
        loop.advance(by: CertificateWarnings.checkInterval)
        #expect(log.lines("APNs certificate expires soon").count == 2)

        warnings.stop()
        let ran = Atomic<Bool>(false)
        #expect(loop.execute { ran.store(true, ordering: .relaxed) })
        loop.advance(by: CertificateWarnings.checkInterval * 2)
        let ranValue = ran.load(ordering: .relaxed)
        #expect(ranValue)
        #expect(log.lines("APNs certificate expires soon").count == 2)
    }

    @Test("push_gateway_apns_certificate_expiry_timestamp_seconds carries each certificate's notAfter")
    func expiryMetric() throws {
        let notAfter = Self.now + 45 * 86_400
        let environment = try ConfigurationTestEnvironment().withCertificateProfile(notAfter: notAfter)
        let configuration = try #require(environment.configuration())
        let gateway = try TestGateway(configuration: configuration, listening: false)
        let scraped = try ScrapedMetrics(gateway.application.metrics.render())
        #expect(
            scraped.samples[#"push_gateway_apns_certificate_expiry_timestamp_seconds{profile="buzz-ios-cert"}"#]
                == Double(notAfter))
        #expect(
            scraped.samples[#"push_gateway_apns_certificate_expiry_timestamp_seconds{profile="buzz-ios-production"}"#]
                == nil, "a token-auth profile has no certificate")
    }
}

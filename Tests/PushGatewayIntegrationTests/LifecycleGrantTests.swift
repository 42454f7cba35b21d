import Foundation
import PushAttest
import PushCrypto
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import GatewayLifecycle
@testable import PushGateway

@Suite(
    "Grants from a live delegation open only untouched, under a known key; the App Attest root choice",
    .tags(.postgres), .testBodyThreads)
struct LifecycleGrantTests {
    /// A grant issued by the gateway over HTTP, and the grant envelope of its configuration.
    static func issuedGrant() throws -> (grant: String, envelope: SealedEnvelope, gateway: LifecycleGateway) {
        let gateway = try LifecycleGateway {
            // A predecessor grant key exists too, so "unknown key id" is not merely "not the first key".
            $0.with(
                "PUSH_GATEWAY_GRANT_KEYS",
                "g1:" + Base64.encode([UInt8](repeating: 0x11, count: 32)) + ",g0:"
                    + Base64.encode([UInt8](repeating: 0x12, count: 32)))
        }
        let device = try gateway.makeDevice()
        try gateway.enroll(device)
        let response = try gateway.delegate(device, relay: lifecycleRelayKey(), generation: 1)
        let grant = try #require(try lifecycleObject(response)["endpoint_grant"] as? String)
        return (
            grant, SealedEnvelope(purpose: .endpointGrant, keyring: Keyring(gateway.configuration.grantKeys)), gateway
        )
    }

    @Test("the issued grant opens; any tampered byte of its sealed part makes it unopenable")
    func tamperedByte() throws {
        let (grant, envelope, _) = try Self.issuedGrant()
        #expect(EndpointGrant.open(grant, with: envelope) != nil)
        let dot = try #require(grant.firstIndex(of: "."))
        let sealed = try #require(Base64.decodeURLNoPadding(String(grant[grant.index(after: dot)...])))
        for position in [0, 11, 12, sealed.count / 2, sealed.count - 17, sealed.count - 1] {
            var tampered = sealed
            tampered[position] ^= 0x01
            #expect(EndpointGrant.open("g1." + Base64.encodeURLNoPadding(tampered), with: envelope) == nil)
        }
    }

    @Test("relabelling the grant with another configured key id, or an unknown one, makes it unopenable")
    func keyIdentifierPrefix() throws {
        let (grant, envelope, _) = try Self.issuedGrant()
        #expect(grant.hasPrefix("g1."))
        let body = grant.dropFirst(2)
        #expect(EndpointGrant.open("g0" + body, with: envelope) == nil)
        #expect(EndpointGrant.open("g9" + body, with: envelope) == nil)
        // The token custody keyring does not open grants (separate keys and AAD).
        let (_, _, gateway) = try Self.issuedGrant()
        let custody = SealedEnvelope(purpose: .tokenCustody, keyring: Keyring(gateway.configuration.tokenKeys))
        #expect(custody.open(grant) == nil)
    }

    @Test("a grant of an older generation still opens but no longer names the stored delegation")
    func olderGeneration() throws {
        let gateway = try LifecycleGateway()
        let device = try gateway.makeDevice()
        try gateway.enroll(device)
        let relay = lifecycleRelayKey()
        let first = try gateway.grant(try gateway.delegate(device, relay: relay, generation: 1))
        let second = try gateway.grant(try gateway.delegate(device, relay: relay, generation: 2))
        let stored = try gateway.query("SELECT delegation_id::text, generation FROM delegations")
        #expect(stored.rowCount == 1)
        #expect(try stored.string(row: 0, column: 0) == second.delegationID.text)
        #expect(try stored.string(row: 0, column: 0) != first.delegationID.text)
        #expect(try stored.int64(row: 0, column: 1) == 2)
    }

    @Test("the App Attest root: Apple's by default; another root only when explicitly allowed")
    func rootSelection() throws {
        let authority = try SyntheticAppAttestAuthority()
        let environment = try ConfigurationTestEnvironment()
        let rootPath = try environment.write(
            "root.pem",
            "-----BEGIN CERTIFICATE-----\n" + Base64.encode(authority.root.derEncoded) + "\n-----END CERTIFICATE-----\n"
        )

        let standard = try #require(environment.configuration())
        let apple = try AppAttestRoot.verifier(for: standard).get()
        #expect(AppleAppAttestationRoot.isAppleRoot(apple.root))

        let refused = try #require(environment.with("PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE", rootPath).configuration())
        #expect(
            throws: LifecycleError(
                .noUsableAppAttestRoot, reason: "the configured root is not Apple's and is not explicitly allowed")
        ) { try AppAttestRoot.verifier(for: refused).get() }

        let allowed = try #require(
            environment.with("PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE", rootPath)
                .with("PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT", "true").configuration())
        #expect(try AppAttestRoot.verifier(for: allowed).get().root == authority.root)
    }

    @Test("with a refused root, enrollment answers 503 and writes nothing")
    func refusedRootEnrollment() throws {
        let gateway = try LifecycleGateway { $0.with("PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT", nil) }
        let device = try gateway.makeDevice()
        let response = try gateway.post(
            "/v1/installations",
            try device.enrollBody(
                challenge: try gateway.challenge(), endpoint: device.endpoint,
                expiresAt: gateway.clock.unixSeconds() + 600))
        #expect(response.status == 503 && response.bodyText == #"{"error":"temporarily_unavailable"}"#)
        #expect(try gateway.rowCounts().values.reduce(0, +) == 0)
    }
}

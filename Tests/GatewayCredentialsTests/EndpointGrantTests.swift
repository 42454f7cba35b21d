import Foundation
import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import GatewayCredentials

@Suite("Endpoint grants (docs/protocol.md §7)", .testBodyThreads)
struct EndpointGrantTests {
    static let envelope = SealedEnvelope(
        purpose: .endpointGrant,
        keyring: Keyring(keys: [Keyring.Key(id: "grant-1", bytes: [UInt8](repeating: 7, count: 32))]))
    static let grant = EndpointGrant(
        delegationID: CanonicalUUID("0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b")!,
        relayPublicKey: [UInt8](repeating: 0xab, count: 32), appProfile: "buzz-ios-sandbox", endpointEpoch: 3,
        generation: 9, expiresAt: 1_800_000_000)

    @Test("the plaintext is compact JSON with the members in the specified order")
    func plaintextLayout() {
        let expected =
            #"{"v":1,"delegation_id":"0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b","relay_pubkey":""#
            + String(repeating: "ab", count: 32)
            + #"","app_profile":"buzz-ios-sandbox","endpoint_epoch":3,"generation":9,"expires_at":1800000000}"#
        #expect(String(decoding: Self.grant.plaintext, as: UTF8.self) == expected)
    }

    @Test("a sealed grant opens to the same grant and carries no token")
    func roundTrip() throws {
        let sealed = try Self.grant.sealed(with: Self.envelope)
        #expect(sealed.utf8.count <= EndpointGrant.maximumSealedLength)
        #expect(EndpointGrant.open(sealed, with: Self.envelope) == Self.grant)
    }

    @Test("sealed plaintexts that are not strict grants do not open")
    func strictPlaintext() throws {
        let bad = [
            #"{"v":2,"delegation_id":"0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b","relay_pubkey":"AB","app_profile":"p","endpoint_epoch":1,"generation":1,"expires_at":1}"#,
            #"{"v":1,"delegation_id":"0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b","app_profile":"p","endpoint_epoch":1,"generation":1,"expires_at":1}"#,
            #"{"v":1,"v":1,"delegation_id":"0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b","relay_pubkey":"00","app_profile":"p","endpoint_epoch":1,"generation":1,"expires_at":1}"#,
        ]
        for plaintext in bad {
            let sealed = try Self.envelope.seal(Array(plaintext.utf8))
            #expect(EndpointGrant.open(sealed, with: Self.envelope) == nil)
        }
        // Upper-case hex in the relay key is not the canonical form the gateway writes.
        let plaintext = String(decoding: Self.grant.plaintext, as: UTF8.self)
        let upper = plaintext.replacingOccurrences(
            of: String(repeating: "ab", count: 32), with: String(repeating: "AB", count: 32))
        #expect(EndpointGrant.open(try Self.envelope.seal(Array(upper.utf8)), with: Self.envelope) == nil)
    }

    @Test("a grant longer than 4096 bytes is refused before any decryption")
    func lengthBound() {
        let long = "grant-1." + String(repeating: "A", count: 4100)
        #expect(EndpointGrant.open(long, with: Self.envelope) == nil)
    }
}

import PushAttest
import PushCrypto
import PushTestSupport
import Testing

@Suite("Assertion verification with synthetic devices, including iOS 27 extension data", .testBodyThreads)
struct SyntheticAssertionTests {
    let device: SyntheticAppAttestDevice
    let clientDataHash = SHA256.hash(Array("buzz.push.delegate.v1\n{}".utf8))
    static let appID = "ABCDE12345.xyz.buzz.push"
    /// `{"ext": h'00'×55}`: 62 bytes, so that authenticatorData is 37 + 62 = 99 bytes.
    static let extensionsMap = SyntheticCBOR.map([(.text("ext"), .bytes([UInt8](repeating: 0, count: 55)))]).encoded

    init() throws {
        device = try SyntheticAppAttestAuthority().makeDevice(appID: Self.appID)
    }

    func verify(
        _ assertion: [UInt8], previousCounter: UInt32 = 0, appID: String = appID, publicKey: P256PublicKey? = nil
    ) throws(AppAttestError) -> UInt32 {
        try AssertionVerifier.verify(
            assertion: assertion, clientDataHash: clientDataHash, appID: appID,
            publicKey: publicKey ?? device.key.publicKey, previousCounter: previousCounter)
    }

    func failure(_ assertion: [UInt8], previousCounter: UInt32 = 0, appID: String = appID) -> AppAttestError.Code? {
        do {
            _ = try verify(assertion, previousCounter: previousCounter, appID: appID)
            return nil
        } catch {
            return error.code
        }
    }

    @Test("an ED-flag assertion with a 99-byte authenticatorData verifies")
    func extensionDataVerifies() throws {
        let authenticatorData = device.assertionAuthenticatorData(counter: 7, extensions: Self.extensionsMap)
        #expect(authenticatorData.count == 99)
        #expect(authenticatorData[32] & 0x80 != 0)
        let assertion = try device.assertion(clientDataHash: clientDataHash, authenticatorData: authenticatorData)
        #expect(try verify(assertion, previousCounter: 6) == 7)
    }

    @Test("a plain 37-byte assertion verifies and returns its counter")
    func plainVerifies() throws {
        let assertion = try device.assertion(clientDataHash: clientDataHash, counter: 1)
        #expect(try verify(assertion) == 1)
        #expect(
            try verify(try device.assertion(clientDataHash: clientDataHash, counter: UInt32.max), previousCounter: 5)
                == UInt32.max)
    }

    @Test("a 37-byte authenticatorData with the ED flag set is rejected (format)")
    func extensionFlagWithoutData() throws {
        let authenticatorData = device.assertionAuthenticatorData(counter: 1, forceExtensionFlag: true)
        #expect(authenticatorData.count == 37)
        #expect(
            failure(try device.assertion(clientDataHash: clientDataHash, authenticatorData: authenticatorData))
                == .format)
    }

    @Test("bytes after byte 37 without the ED flag are rejected (format), even a valid map")
    func trailingBytesWithoutFlag() throws {
        for trailing in [Self.extensionsMap, [0x00]] {
            let authenticatorData = device.assertionAuthenticatorData(counter: 1, trailingBytes: trailing)
            #expect(
                failure(try device.assertion(clientDataHash: clientDataHash, authenticatorData: authenticatorData))
                    == .format)
        }
    }

    @Test("extension data that is not exactly one strict CBOR map is rejected (format)")
    func malformedExtensionData() throws {
        let cases: [[UInt8]] = [
            SyntheticCBOR.array([.unsigned(1)]).encoded,
            SyntheticCBOR.bytes([1, 2]).encoded,
            Self.extensionsMap + [0x00],
            Array(Self.extensionsMap.dropLast()),
            SyntheticCBOR.map([(.text("a"), .unsigned(1)), (.text("a"), .unsigned(2))]).encoded,
            [0xbf, 0x61, 0x61, 0x01, 0xff],
            [0xa1, 0x61, 0x61, 0xf9, 0x3c, 0x00],
        ]
        for (index, extensions) in cases.enumerated() {
            let authenticatorData = device.assertionAuthenticatorData(counter: 1, extensions: extensions)
            let assertion = try device.assertion(clientDataHash: clientDataHash, authenticatorData: authenticatorData)
            #expect(failure(assertion) == .format, "case \(index)")
        }
    }

    @Test("the counter must be strictly greater than the stored one (counter)")
    func counterMustIncrease() throws {
        let assertion = try device.assertion(clientDataHash: clientDataHash, counter: 5)
        #expect(failure(assertion, previousCounter: 5) == .counter)
        #expect(failure(assertion, previousCounter: 6) == .counter)
        #expect(try verify(assertion, previousCounter: 4) == 5)
        #expect(failure(try device.assertion(clientDataHash: clientDataHash, counter: 0)) == .counter)
    }

    @Test("signature: another key, another clientDataHash, raw r‖s, a signature over the unhashed nonce preimage")
    func signatureFailures() throws {
        let authenticatorData = device.assertionAuthenticatorData(counter: 1)
        let other = try SyntheticAppAttestAuthority().makeDevice(appID: Self.appID)
        #expect(
            failure(try other.assertion(clientDataHash: clientDataHash, authenticatorData: authenticatorData))
                == .signature)
        #expect(
            failure(
                try device.assertion(clientDataHash: SHA256.hash(clientDataHash), authenticatorData: authenticatorData))
                == .signature)
        let nonce = SHA256.hash(authenticatorData + clientDataHash)
        let raw = try device.key.es256Signature(for: nonce)
        // ECDSA over authenticatorData ‖ clientDataHash directly, i.e. the nonce is not hashed again.
        let singleHash = try device.key.derSignature(for: authenticatorData + clientDataHash)
        for signature in [raw, singleHash, []] {
            let assertion = SyntheticCBOR.map([
                (.text("signature"), .bytes(signature)), (.text("authenticatorData"), .bytes(authenticatorData)),
            ]).encoded
            #expect(failure(assertion) == .signature)
        }
    }

    @Test("app_id: an assertion for another app")
    func appIDFailure() throws {
        #expect(failure(try device.assertion(clientDataHash: clientDataHash, counter: 1), appID: "OTHER.app") == .appID)
    }

    @Test("format: missing, extra or mistyped members, short authenticatorData, oversized input")
    func formatFailures() throws {
        let authenticatorData = device.assertionAuthenticatorData(counter: 1)
        let signature = try device.key.derSignature(for: SHA256.hash(authenticatorData + clientDataHash))
        let cases: [[UInt8]] = [
            SyntheticCBOR.map([(.text("signature"), .bytes(signature))]).encoded,
            SyntheticCBOR.map([
                (.text("signature"), .bytes(signature)), (.text("authenticatorData"), .bytes(authenticatorData)),
                (.text("x"), .unsigned(0)),
            ]).encoded,
            SyntheticCBOR.map([
                (.text("signature"), .text("sig")), (.text("authenticatorData"), .bytes(authenticatorData)),
            ]).encoded,
            SyntheticCBOR.map([
                (.text("signature"), .bytes(signature)),
                (.text("authenticatorData"), .bytes(Array(authenticatorData.prefix(36)))),
            ]).encoded,
            SyntheticCBOR.map([
                (.text("signature"), .bytes(signature)),
                (.text("authenticatorData"), .map([(.text("rpIdHash"), .bytes([]))])),
            ]).encoded,
            SyntheticCBOR.array([.bytes(signature), .bytes(authenticatorData)]).encoded,
            SyntheticCBOR.map([
                (.text("signature"), .bytes(signature + [UInt8](repeating: 0, count: 1000))),
                (.text("authenticatorData"), .bytes(authenticatorData)),
            ]).encoded,
            try device.assertion(clientDataHash: clientDataHash, counter: 1) + [0],
        ]
        for (index, assertion) in cases.enumerated() {
            #expect(failure(assertion) == .format, "case \(index)")
        }
    }
}

import PushCrypto
import Testing

@Suite("P-256 ECDSA and ES256")
struct P256Tests {
    // Produced independently with the openssl command line:
    // `openssl ecparam -name prime256v1 -genkey`, `openssl pkcs8 -topk8 -nocrypt`,
    // `openssl dgst -sha256 -sign` over the ASCII message below.
    static let publicKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE9OCgR8kmeRX/AXx3y/En5i3JzoQN
        GS2lzcmrEXlo10SA4vYuTmwa3Cf9D9uJHk2QcAZ/9StP5SxFGdFjS32hjA==
        -----END PUBLIC KEY-----

        """
    static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgMY2p+XXotvO9voIf
        um2KdW/pmLot/by+JOUPTfv32xqhRANCAAT04KBHySZ5Ff8BfHfL8SfmLcnOhA0Z
        LaXNyasReWjXRIDi9i5ObBrcJ/0P24keTZBwBn/1K0/lLEUZ0WNLfaGM
        -----END PRIVATE KEY-----

        """
    static let uncompressedPointHex =
        "04f4e0a047c9267915ff017c77cbf127e62dc9ce840d192da5cdc9ab117968d74480e2f62e4e6c1adc27fd0fdb891e4d9070067ff52b4fe52c4519d1634b7da18c"
    static let message = Array("App Attest known answer".utf8)
    static let signatureHex =
        "3045022100d446f62558e13c26c8477fad3726cac1c5d4d08568aad1d7becaa8bb2ccd253702202f3cdcb1b013db3c982a95fc00a709878275c1bc7b72206b4ebe8c86f95bcce4"
    static let p384PublicKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAE+71aPggv3iocbvYXZIm73ZmC1tLsw/Ef
        +3mEyI4ygl0Z3vAf+ycmwraCrIuw9glo0j5SYDD6o6O4nI12QSZ2Hq85QdJv61w4
        ytrHVX97zrdOQIiy85lyRGQTHQCp9YE2
        -----END PUBLIC KEY-----

        """

    @Test("a signature made by the openssl command line verifies, from PEM and from the raw point")
    func verifiesKnownSignature() throws {
        let signature = try #require(Hex.decode(Self.signatureHex))
        let fromPEM = try P256PublicKey(pem: Self.publicKeyPEM)
        #expect(Hex.encode(fromPEM.uncompressedPoint) == Self.uncompressedPointHex)
        let fromPoint = try P256PublicKey(uncompressedPoint: try #require(Hex.decode(Self.uncompressedPointHex)))
        #expect(fromPoint == fromPEM)
        #expect(fromPEM.isValidSignature(derSignature: signature, for: Self.message))
        #expect(fromPoint.isValidSignature(derSignature: signature, for: Self.message))
    }

    @Test("a changed message, a changed signature or trailing bytes do not verify")
    func rejectsAlteredSignatures() throws {
        let key = try P256PublicKey(pem: Self.publicKeyPEM)
        let signature = try #require(Hex.decode(Self.signatureHex))
        #expect(!key.isValidSignature(derSignature: signature, for: Self.message + [0]))
        var flipped = signature
        flipped[40] ^= 1
        #expect(!key.isValidSignature(derSignature: flipped, for: Self.message))
        #expect(!key.isValidSignature(derSignature: signature + [0], for: Self.message))
        #expect(!key.isValidSignature(derSignature: [], for: Self.message))
        #expect(!key.isValidSignature(derSignature: Array(signature.dropFirst(8)), for: Self.message))
    }

    @Test("the PKCS#8 key loads, matches its public key, and its ES256 signatures are 64 bytes that verify")
    func es256RoundTrip() throws {
        let privateKey = try P256PrivateKey(pem: Self.privateKeyPEM)
        #expect(Hex.encode(privateKey.publicKey.uncompressedPoint) == Self.uncompressedPointHex)
        let signingInput = Array("eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJURUFNIn0".utf8)
        let signature = try privateKey.es256Signature(for: signingInput)
        #expect(signature.count == 64)
        #expect(privateKey.publicKey.isValidRawSignature(signature, for: signingInput))
        #expect(!privateKey.publicKey.isValidRawSignature(signature, for: signingInput + [0x2e]))
        #expect(!privateKey.publicKey.isValidRawSignature(Array(signature.prefix(63)), for: signingInput))
    }

    @Test("generated keys sign DER signatures that verify only under their own public key")
    func generatedKeys() throws {
        let first = try P256PrivateKey.generate()
        let second = try P256PrivateKey.generate()
        #expect(first.publicKey != second.publicKey)
        let signature = try first.derSignature(for: Self.message)
        #expect(first.publicKey.isValidSignature(derSignature: signature, for: Self.message))
        #expect(!second.publicKey.isValidSignature(derSignature: signature, for: Self.message))
        let reloaded = try P256PrivateKey(pem: first.pkcs8PEM())
        #expect(reloaded.publicKey == first.publicKey)
        #expect(try P256PublicKey(pem: first.publicKey.pem) == first.publicKey)
    }

    @Test("points off the curve, compressed points, wrong lengths and other curves are refused")
    func rejectsInvalidKeys() throws {
        var offCurve = try #require(Hex.decode(Self.uncompressedPointHex))
        offCurve[64] ^= 1
        #expect(throws: CryptoError.self) { try P256PublicKey(uncompressedPoint: offCurve) }
        let point = try #require(Hex.decode(Self.uncompressedPointHex))
        #expect(throws: CryptoError.self) { try P256PublicKey(uncompressedPoint: [0x02] + Array(point[1..<33])) }
        #expect(throws: CryptoError.self) { try P256PublicKey(uncompressedPoint: Array(point.prefix(64))) }
        #expect(throws: CryptoError.self) { try P256PublicKey(pem: Self.p384PublicKeyPEM) }
        #expect(throws: CryptoError.self) { try P256PrivateKey(pem: Self.publicKeyPEM) }
        #expect(throws: CryptoError.self) { try P256PublicKey(pem: "not a key") }
    }

    @Test("a failed load reports the invalid-key code with OpenSSL's error strings")
    func capturesOpenSSLErrors() throws {
        let error = try #require(throws: CryptoError.self) {
            try P256PublicKey(pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
        }
        #expect(error.code == .invalidKey && !error.openSSLErrors.isEmpty)
    }
}

import Foundation
import PushCrypto
import PushTestSupport
import Testing

@testable import PushNostr

/// One row of the official BIP-340 test vectors (bitcoin/bips `bip-0340/test-vectors.csv`).
struct BIP340Vector {
    let index: Int
    let secretKey: [UInt8]?
    let publicKey: [UInt8]
    let auxiliaryRandomness: [UInt8]?
    let message: [UInt8]
    let signature: [UInt8]
    let verifies: Bool

    static func all() throws -> [BIP340Vector] {
        let text = String(decoding: try fixture("bip340_test-vectors.csv"), as: UTF8.self)
        let lines = text.split(whereSeparator: \.isNewline).dropFirst()
        return try lines.map { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 7, let index = Int(fields[0]), let publicKey = bytes(fromHex: fields[2]),
                let message = bytes(fromHex: fields[4]), let signature = bytes(fromHex: fields[5])
            else { throw FixtureError.missing("well-formed BIP-340 row: \(line)") }
            return BIP340Vector(
                index: index, secretKey: bytes(fromHex: fields[1]).flatMap { $0.isEmpty ? nil : $0 },
                publicKey: publicKey, auxiliaryRandomness: bytes(fromHex: fields[3]).flatMap { $0.isEmpty ? nil : $0 },
                message: message, signature: signature, verifies: fields[6] == "TRUE")
        }
    }
}

@Suite("BIP-340 Schnorr signatures through libsecp256k1", .testBodyThreads)
struct SchnorrTests {
    @Test("the fixture holds the 19 official rows in order")
    func fixtureShape() throws {
        let vectors = try BIP340Vector.all()
        #expect(vectors.map(\.index) == Array(0..<19))
        #expect(vectors.filter(\.verifies).map(\.index) == [0, 1, 2, 3, 4, 15, 16, 17, 18])
        // Row 4 is verify-only; rows 15-18 sign messages that are not 32 bytes (not needed by NIP-98).
        #expect(vectors.filter { $0.secretKey != nil && $0.message.count == 32 }.map(\.index) == [0, 1, 2, 3])
    }

    @Test("each row gets its stated verdict (key parse + verify)", arguments: 0..<19)
    func verdict(row: Int) throws {
        let vector = try #require(try BIP340Vector.all().first { $0.index == row })
        let verdict = XOnlyPublicKey(bytes: vector.publicKey).map {
            Schnorr.verify(signature: vector.signature, message: vector.message, publicKey: $0)
        }
        #expect((verdict ?? false) == vector.verifies)
    }

    @Test("rows 0-3: signing reproduces the public key and the signature with the given aux_rand", arguments: 0..<4)
    func signing(row: Int) throws {
        let vector = try #require(try BIP340Vector.all().first { $0.index == row })
        let secretKey = try #require(vector.secretKey)
        let auxiliaryRandomness = try #require(vector.auxiliaryRandomness)
        let key = try #require(SchnorrSigningKey(secretKey: secretKey))
        #expect(key.publicKey.bytes == vector.publicKey)
        #expect(key.sign(message32: vector.message, auxiliaryRandomness: auxiliaryRandomness) == vector.signature)
    }

    @Test("x-only keys off the curve (row 5) or not below the field size (row 14) are refused")
    func invalidPublicKeys() throws {
        let vectors = try BIP340Vector.all()
        for vector in vectors {
            let shouldParse = vector.index != 5 && vector.index != 14
            #expect((XOnlyPublicKey(bytes: vector.publicKey) != nil) == shouldParse, "row \(vector.index)")
        }
    }

    @Test("a signature fails for another message, another key, a flipped bit or a wrong length")
    func tampering() throws {
        let key = try #require(SchnorrSigningKey(secretKey: [UInt8](repeating: 0x42, count: 32)))
        let other = try #require(SchnorrSigningKey(secretKey: [UInt8](repeating: 0x43, count: 32)))
        let message = SHA256.hash(Array("hello".utf8))
        let signature = key.sign(message32: message, auxiliaryRandomness: [UInt8](repeating: 7, count: 32))
        #expect(Schnorr.verify(signature: signature, message: message, publicKey: key.publicKey))
        #expect(!Schnorr.verify(signature: signature, message: message, publicKey: other.publicKey))
        #expect(!Schnorr.verify(signature: signature, message: SHA256.hash([1]), publicKey: key.publicKey))
        var flipped = signature
        flipped[40] ^= 0x01
        #expect(!Schnorr.verify(signature: flipped, message: message, publicKey: key.publicKey))
        #expect(!Schnorr.verify(signature: Array(signature.dropLast()), message: message, publicKey: key.publicKey))
    }

    @Test("secret keys must be 32 bytes in [1, n-1]")
    func secretKeyRange() throws {
        let order = try #require(bytes(fromHex: "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"))
        #expect(SchnorrSigningKey(secretKey: [UInt8](repeating: 0, count: 32)) == nil)
        #expect(SchnorrSigningKey(secretKey: order) == nil)
        #expect(SchnorrSigningKey(secretKey: [UInt8](repeating: 1, count: 31)) == nil)
        #expect(SchnorrSigningKey(secretKey: [UInt8](repeating: 0, count: 31) + [1]) != nil)
    }

    @Test("x-only key hex must be 64 lowercase hex characters of a valid point")
    func publicKeyHex() throws {
        let generatorX = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
        #expect(XOnlyPublicKey(hex: generatorX)?.hex == generatorX)
        #expect(XOnlyPublicKey(hex: generatorX.uppercased()) == nil)
        #expect(XOnlyPublicKey(hex: String(generatorX.dropLast())) == nil)
        #expect(XOnlyPublicKey(hex: generatorX + "00") == nil)
        #expect(XOnlyPublicKey(hex: "eefdea4cdb677750a420fee807eacf21eb9898ae79b9768766e4faa04a2d4a34") == nil)
    }

    @Test("x-only keys are equal and hash alike exactly when their bytes are")
    func publicKeyIdentityIsItsBytes() throws {
        let generatorX = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
        let first = try #require(XOnlyPublicKey(hex: generatorX))
        let again = try #require(XOnlyPublicKey(bytes: first.bytes))
        let other = try #require(SchnorrSigningKey(secretKey: [UInt8](repeating: 0, count: 31) + [2])).publicKey
        #expect(first == again)
        #expect(first != other)
        #expect(Set([first, again, other]).count == 2)
        #expect(first.hashValue == again.hashValue)
    }
}

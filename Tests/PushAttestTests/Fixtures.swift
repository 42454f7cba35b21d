import Foundation
import PushAttest
import PushCrypto
import Testing

/// Real device vectors (node-app-attest, veehaitch) and the transcript vectors, in Fixtures/.
enum Fixtures {
    struct LoadError: Error {}

    static func data(_ name: String) throws -> Data {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures") else {
            throw LoadError()
        }
        return try Data(contentsOf: url)
    }

    static func decode<T: Decodable>(_ type: T.Type, from name: String) throws -> T {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(type, from: data(name))
    }

    /// Unix seconds of an ISO 8601 time with or without fractional seconds, rounded down.
    static func unixTime(_ text: String) throws -> Int64 {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions =
            text.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        guard let date = formatter.date(from: text) else { throw LoadError() }
        return Int64(date.timeIntervalSince1970.rounded(.down))
    }

    static func base64(_ text: String) throws -> [UInt8] {
        guard let bytes = Base64.decode(text) else { throw LoadError() }
        return bytes
    }

    private struct VeehaitchFile: Decodable {
        struct Sample: Decodable {
            let file: String
            let kind: String
            let appId: String
            let environment: String
            let keyIdB64: String
            let publicKeyX962Hex: String
            let clientDataHashB64: String
            let attestationObjectB64: String?
            let verificationTime: String?
            let assertionB64: String?
            let previousCounter: UInt32?
            let expectedCounter: UInt32?
        }
        let samples: [Sample]
    }

    private struct NodeFile: Decodable {
        struct Attestation: Decodable {
            let name: String
            let attestationObjectB64: String
            let keyIdB64: String
            let clientDataHashB64: String
            let appId: String
            let environment: String
            let verificationTime: String
        }
        struct Assertion: Decodable {
            let assertionB64: String
            let publicKeyPem: String
            let publicKeyX962Hex: String
            let clientDataUtf8: String
            let appId: String
            let previousCounter: UInt32
        }
        let attestations: [Attestation]
        let assertion: Assertion
    }

    /// A real attestation and everything needed to verify it.
    struct AttestationVector: Sendable, CustomTestStringConvertible {
        let name: String
        let attestationObject: [UInt8]
        let keyID: [UInt8]
        let publicKeyHex: String?
        let clientDataHash: [UInt8]
        let appID: String
        let environment: AppAttestEnvironment
        let verificationTime: Int64
        var testDescription: String { name }
    }

    /// A real assertion and everything needed to verify it.
    struct AssertionVector: Sendable, CustomTestStringConvertible {
        let name: String
        let assertion: [UInt8]
        let publicKey: P256PublicKey
        let clientDataHash: [UInt8]
        let appID: String
        let previousCounter: UInt32
        let expectedCounter: UInt32
        var testDescription: String { name }
    }

    /// The 7 veehaitch attestations and the 2 node-app-attest ones.
    static func attestationVectors() throws -> [AttestationVector] {
        let veehaitch = try decode(VeehaitchFile.self, from: "veehaitch_samples.json").samples.filter {
            $0.kind == "attestation"
        }
        let node = try decode(NodeFile.self, from: "node-app-attest_2024.json").attestations
        var vectors: [AttestationVector] = []
        for sample in veehaitch {
            guard let object = sample.attestationObjectB64, let time = sample.verificationTime,
                let environment = AppAttestEnvironment(rawValue: sample.environment)
            else { throw LoadError() }
            vectors.append(
                AttestationVector(
                    name: sample.file, attestationObject: try base64(object), keyID: try base64(sample.keyIdB64),
                    publicKeyHex: sample.publicKeyX962Hex, clientDataHash: try base64(sample.clientDataHashB64),
                    appID: sample.appId, environment: environment, verificationTime: try unixTime(time)))
        }
        for attestation in node {
            guard let environment = AppAttestEnvironment(rawValue: attestation.environment) else { throw LoadError() }
            vectors.append(
                AttestationVector(
                    name: "node-app-attest \(attestation.name)",
                    attestationObject: try base64(attestation.attestationObjectB64),
                    keyID: try base64(attestation.keyIdB64), publicKeyHex: nil,
                    clientDataHash: try base64(attestation.clientDataHashB64), appID: attestation.appId,
                    environment: environment, verificationTime: try unixTime(attestation.verificationTime)))
        }
        return vectors
    }

    /// The 7 veehaitch assertions and the node-app-attest one.
    static func assertionVectors() throws -> [AssertionVector] {
        let veehaitch = try decode(VeehaitchFile.self, from: "veehaitch_samples.json").samples.filter {
            $0.kind == "assertion"
        }
        let node = try decode(NodeFile.self, from: "node-app-attest_2024.json").assertion
        var vectors: [AssertionVector] = []
        for sample in veehaitch {
            guard let assertion = sample.assertionB64, let previous = sample.previousCounter,
                let expected = sample.expectedCounter, let point = Hex.decode(sample.publicKeyX962Hex)
            else { throw LoadError() }
            vectors.append(
                AssertionVector(
                    name: sample.file, assertion: try base64(assertion),
                    publicKey: try P256PublicKey(uncompressedPoint: point),
                    clientDataHash: try base64(sample.clientDataHashB64), appID: sample.appId,
                    previousCounter: previous, expectedCounter: expected))
        }
        let pemKey = try P256PublicKey(pem: node.publicKeyPem)
        guard Hex.encode(pemKey.uncompressedPoint) == node.publicKeyX962Hex else { throw LoadError() }
        vectors.append(
            AssertionVector(
                name: "node-app-attest assertion", assertion: try base64(node.assertionB64), publicKey: pemKey,
                clientDataHash: SHA256.hash(Array(node.clientDataUtf8.utf8)), appID: node.appId,
                previousCounter: node.previousCounter, expectedCounter: node.previousCounter + 1))
        return vectors
    }
}

import Foundation
import PushCrypto
import PushKeyAttestation
import Testing

/// The real chains of Fixtures/ (see its README) with what each was recorded with.
struct RealChain: Sendable, CustomTestStringConvertible {
    let name: String
    /// Inside every certificate's validity except the anchor copy's, and for the Sony chain the
    /// expired factory intermediates'.
    let recordedTime: Int64
    let challenge: [UInt8]
    let packageName: String
    /// SHA-256 of the app's signing certificate (the companion's `signatures`).
    var signingDigest = Self.collectorSigningDigest
    let chain: [[UInt8]]
    /// What §5a refuses about the device itself at the recorded time, with every input right.
    let deviceFailures: [KeyAttestationError.Code]
    /// A batch certificate with a `serialNumber` subject directly under the root (§5a step 2).
    var isFactoryProvisioned = false

    var testDescription: String { name }

    /// SHA-256 of the signing certificate of Google's collector apps.
    static let collectorSigningDigest = Hex.decode("103938ee4537e59e8ee792f654504fb8346fc6b346d0bbc4415fc339fcfc8ec1")!

    var requirements: KeyAttestationRequirements {
        KeyAttestationRequirements(
            challenge: challenge, packageName: packageName, signingCertificateDigests: [signingDigest])
    }

    static let all: [RealChain] = [
        RealChain(
            name: "akita_sdk34_TEE_EC_NONE", recordedTime: 1_727_389_885, challenge: Array("challenge".utf8),
            packageName: "com.google.wireless.android.security.attestationverifier.collector",
            chain: KeyAttestationFixtures.chain("akita_sdk34_TEE_EC_NONE"),
            deviceFailures: [.bootState]),  // unlocked, unverified boot
        RealChain(
            name: "caiman_sdk36_SB_EC_RKP", recordedTime: 1_758_900_646,
            challenge: Array("7ccac1ea-4845-482e-858d-f6fa9aa8c295".utf8),
            packageName: "com.google.android.attestation",
            chain: KeyAttestationFixtures.chain("caiman_sdk36_SB_EC_RKP"), deviceFailures: []),
        RealChain(
            name: "blueline_sdk28_TEE_RSA_NONE", recordedTime: 1_713_719_900, challenge: Array("challenge".utf8),
            packageName: "com.google.wireless.android.security.attestationverifier.collector",
            chain: KeyAttestationFixtures.chain("blueline_sdk28_TEE_RSA_NONE"),
            deviceFailures: [.key, .bootState],  // an RSA key; unlocked, unverified boot
            isFactoryProvisioned: true),
        // A locked, verified Xperia 10 III whose two factory intermediates expired on 2026-05-24,
        // ten days before the key was made (creationDateTime).
        RealChain(
            name: "sony-xperia10-iii_sdk33_TEE_EC", recordedTime: 1_780_585_145,
            challenge: Hex.decode("3eafe4d5dd0090de5a42b432b42481af5ce29963656b2584c59a492de16d00c9")!,
            packageName: "com.android.vending",
            signingDigest: Hex.decode("f0fd6c5b410f25cb25c3b53346c8972fae30f8ee7411df910480ad6b2d60db83")!,
            chain: KeyAttestationFixtures.chain("sony-xperia10-iii_sdk33_TEE_EC"), deviceFailures: [],
            isFactoryProvisioned: true),
    ]
}

enum KeyAttestationFixtures {
    static func url(_ name: String) -> URL {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures") else {
            fatalError("missing fixture \(name)")
        }
        return url
    }

    static func text(_ name: String) -> String {
        guard let text = try? String(contentsOf: url(name), encoding: .utf8) else { fatalError("unreadable \(name)") }
        return text
    }

    static func chain(_ name: String) -> [[UInt8]] {
        guard let chain = PEMCertificates.decode(text(name + ".pem")) else { fatalError("bad PEM in \(name)") }
        return chain
    }

    /// The companion JSON of a chain, as Foundation reads it (independent of PushJSON).
    static func companion(_ name: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url(name + ".json")))
        guard let companion = object as? [String: Any] else { fatalError("companion \(name) is not an object") }
        return companion
    }
}

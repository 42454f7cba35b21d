import PushAttest
import PushCrypto

/// Attestation objects verified against the pinned Apple root with the fixed parameters of the
/// node-app-attest "development" vector (Fuzz/corpus/attestation/node-development.bin verifies).
enum AttestationTarget {
    static let verifier: AttestationVerifier = {
        guard let verifier = try? AttestationVerifier.apple() else { fatalError("the built-in Apple root is damaged") }
        return verifier
    }()
    static let keyID = decodeBase64("s/134MbeEEZDZKCvOTf+jZgNhpoDwdXZ8cKfTym8FUg=")
    static let clientDataHash = decodeBase64("lN8HzZCwlr5a0NIsM9oejXZwNcpjFyXixnhvIBSZlCE=")
    static let appID = "V8H6LQ9448.io.uebelacker.AppAttestExample"
    /// 2024-02-03T21:27:06Z, inside the vector's leaf certificate validity.
    static let time: Int64 = 1_706_995_626

    static func prepare() { _ = verifier }

    static func run(_ input: [UInt8]) {
        guard
            let key = try? verifier.verify(
                attestationObject: input, clientDataHash: clientDataHash, keyID: keyID, appID: appID,
                environment: .development, at: time)
        else { return }
        FuzzCheck.require(key.keyID == keyID, "accepted for another key id")
        FuzzCheck.require(SHA256.hash(key.publicKey.uncompressedPoint) == keyID, "key id is not the key's hash")
    }
}

/// Assertions checked with the fixed key, client data and app id of the node-app-attest assertion
/// vector (Fuzz/corpus/assertion/node.bin verifies with counter 1).
enum AssertionTarget {
    static let publicKey: P256PublicKey = {
        let point = Hex.decode(
            "0483af6dd98ce070f4cb531f1982efab6dc8a479a10bf0fa5bf871b441322e973f"
                + "18501f6d82fd690d1aee5a4f3b9d90b7a2eaf9ea9cc859aa9711b696c9a99dcc")
        guard let point, let key = try? P256PublicKey(uncompressedPoint: point) else {
            fatalError("the fixed assertion key does not decode")
        }
        return key
    }()
    static let clientDataHash = SHA256.hash(
        Array(#"{"subject":"Lorem ipsum","message":"Lorem ipsum dolor sit amet, consectetur adipiscing elit."}"#.utf8))
    static let appID = "V8H6LQ9448.io.uebelacker.AppAttestExample"

    static func prepare() { _ = publicKey }

    static func run(_ input: [UInt8]) {
        guard
            let counter = try? AssertionVerifier.verify(
                assertion: input, clientDataHash: clientDataHash, appID: appID, publicKey: publicKey,
                previousCounter: 0)
        else { return }
        FuzzCheck.require(counter > 0, "counter not above the previous one")
        // The same assertion replayed against its own counter must be refused (docs/protocol.md §5 step 4).
        let replay = try? AssertionVerifier.verify(
            assertion: input, clientDataHash: clientDataHash, appID: appID, publicKey: publicKey,
            previousCounter: counter)
        FuzzCheck.require(replay == nil, "a replayed assertion was accepted")
    }
}

func decodeBase64(_ text: String) -> [UInt8] {
    guard let bytes = Base64.decode(text) else { fatalError("bad base64 constant") }
    return bytes
}

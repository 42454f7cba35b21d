import Foundation
import PushCrypto
import PushTestSupport
import Testing

@testable import PushNostr

/// Runs the Python side of the interop tests: an independent NIP-01/BIP-340/NIP-98 implementation
/// built from Python's json, hashlib and base64 and the `coincurve` package (PyPI).
enum PythonNostr {
    static let script = #"""
        import base64, hashlib, json, sys
        from coincurve import PrivateKey
        from coincurve.keys import PublicKeyXOnly

        def preimage(event):
            fields = [0, event["pubkey"], event["created_at"], event["kind"], event["tags"], event["content"]]
            return json.dumps(fields, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

        if sys.argv[1] == "sign":
            url, body, created_at, content = sys.argv[2], bytes.fromhex(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
            key = PrivateKey()
            event = {
                "pubkey": key.public_key_xonly.format().hex(),
                "created_at": created_at,
                "kind": 27235,
                "tags": [["u", url], ["method", "POST"], ["payload", hashlib.sha256(body).hexdigest()]],
                "content": content,
            }
            event["id"] = hashlib.sha256(preimage(event)).hexdigest()
            event["sig"] = key.sign_schnorr(bytes.fromhex(event["id"])).hex()
            # Default json.dumps: spaces after separators and \uXXXX escapes (surrogate pairs) for non-ASCII.
            print("Nostr " + base64.b64encode(json.dumps(event).encode("ascii")).decode("ascii"))
            print(event["pubkey"])
        else:
            event = json.loads(base64.b64decode(sys.argv[2].split(" ", 1)[1]))
            id_ok = hashlib.sha256(preimage(event)).hexdigest() == event["id"]
            key = PublicKeyXOnly(bytes.fromhex(event["pubkey"]))
            sig_ok = key.verify(bytes.fromhex(event["sig"]), bytes.fromhex(event["id"]))
            print("id=%s sig=%s" % (id_ok, sig_ok))
        """#

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = try PythonProcess.run(arguments, standardError: .discarded)
        return (result.status, String(decoding: result.output, as: UTF8.self))
    }
}

@Suite(
    "NIP-98 interop with an independent implementation (Python json/hashlib + coincurve)", .tags(.process, .external),
    .testBodyThreads)
struct NIP98InteropTests {
    static let content = "interop \"quoted\" back\\slash a/b\nline\ttab\r\u{08}\u{0C}\u{01}\u{1F}\u{7F} 🫡 é 日本"
    static let body = Array(#"{"v":1,"request_id":"0b6f3e4c-8d2a-4f1e-9c7b-5a3d2e1f0a9b"}"#.utf8)
    static let now: Int64 = 1_800_000_000

    @Test("a header signed by the Python implementation is accepted")
    func pythonSigns() throws {
        let url = try #require(
            ReceivedRequestURL(host: "push.example.com", forwardedProto: "https", requestTarget: "/v1/deliveries/apns"))
        let result = try PythonNostr.run([
            "-c", PythonNostr.script, "sign", url.string, Hex.encode(Self.body), String(Self.now),
            Self.content,
        ])
        try #require(result.status == 0)
        let lines = result.output.split(separator: "\n").map(String.init)
        try #require(lines.count == 2)
        let verifier = NIP98Verifier()
        let authorization = try verifier.verify(
            authorization: lines[0], requestURL: url, method: "POST", body: Self.body, now: Self.now
        ).get()
        #expect(authorization.relayPublicKey.hex == lines[1])
        #expect(authorization.createdAt == Self.now)
    }

    @Test("a header signed here verifies in the Python implementation")
    func swiftSigns() throws {
        let key = try #require(SchnorrSigningKey(secretKey: SHA256.hash(Array("interop".utf8))))
        let payload = Hex.encode(SHA256.hash(Self.body))
        let event = NostrEvent(
            signedBy: key, createdAt: Self.now, kind: NIP98Verifier.eventKind,
            tags: [["u", "https://push.example.com/v1/deliveries/apns"], ["method", "POST"], ["payload", payload]],
            content: Self.content, auxiliaryRandomness: [UInt8](repeating: 0, count: 32))
        let result = try PythonNostr.run([
            "-c", PythonNostr.script, "verify", NIP98Signer.authorizationHeader(for: event),
        ])
        #expect(result.status == 0)
        #expect(result.output == "id=True sig=True\n")
    }
}

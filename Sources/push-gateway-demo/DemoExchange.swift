import Foundation
import PushCrypto
import PushNostr
import PushRelayClient

/// One request the demo made and what the gateway answered.
struct DemoStep: Sendable {
    let title: String
    let status: Int
    let body: String
}

/// The demo's side of the conversation with the gateway's public listener, shared by the iPhone and
/// the Android flows: each request and its answer is printed through `say` and kept as a step.
struct DemoExchange {
    /// `http://host:port` of the public listener, no trailing slash.
    let gatewayURL: String
    let client: HTTPPostClient
    let say: (String) -> Void
    private(set) var steps: [DemoStep] = []

    init(gatewayURL: String, client: HTTPPostClient, say: @escaping (String) -> Void) {
        self.gatewayURL = gatewayURL
        self.client = client
        self.say = say
    }

    /// `POST /v1/installations/challenges` (docs/protocol.md §4.1).
    mutating func challenge(number: Int) throws -> (id: String, challenge: String) {
        let object = try post("\(number). challenge", "/v1/installations/challenges", #"{"v":1}"#, expecting: 200)
        guard let id = object["challenge_id"] as? String, let challenge = object["challenge"] as? String else {
            throw DemoError("challenge: the answer has no challenge_id or challenge")
        }
        return (id, challenge)
    }

    /// Posts `body` to `path`, prints the answer, and returns its JSON object when the status is
    /// `expected`.
    mutating func post(_ title: String, _ path: String, _ body: String, expecting expected: Int) throws -> [String: Any]
    {
        say("==> \(title): POST \(path)")
        let response: HTTPResponse
        do {
            response = try client.post(
                url: gatewayURL + path, headers: ["Content-Type: application/json", "Expect:"], body: Array(body.utf8))
        } catch {
            throw DemoError(
                "\(title): no answer from \(gatewayURL) (\(error.description)); is scripts/run-local running?")
        }
        try record(title: title, response, expecting: expected)
        guard let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else {
            throw DemoError("\(title): the answer is not a JSON object")
        }
        return object
    }

    /// The relay's delivery (docs/protocol.md §4.7): a fresh request id, a minute to live, NIP-98
    /// signed by `relay` for the URL it is posted to. Returns the request id.
    mutating func deliver(title: String, path: String, grant: String, relay: SchnorrSigningKey) throws -> String {
        let requestID = UUID().uuidString.lowercased()
        let url = gatewayURL + path
        let expiresAt = Self.unixSeconds() + Self.deliveryLifetime
        let body = Array(
            #"{"v":1,"endpoint_grant":"\#(grant)","request_id":"\#(requestID)","expires_at":\#(expiresAt)}"#.utf8)
        say("==> \(title) as the relay: POST \(path), NIP-98 signed for \(url)")
        let response: HTTPResponse
        do {
            response = try RelayDeliveryPoster(key: relay, client: client).post(
                url: url, body: body, now: Self.unixSeconds())
        } catch {
            throw DemoError("deliver: no answer from the gateway (\(error))")
        }
        try record(title: title, response, expecting: 200)
        return requestID
    }

    /// After the delivery: the relay's key and grant, and the command that delivers with them again.
    func showRelaySide(relay: SchnorrSigningKey, keyFile: String?, grant: String, deliveryPath: String) {
        say("==> the relay side")
        say("    relay public key: \(relay.publicKey.hex)")
        say("    endpoint grant:   \(grant)")
        guard let keyFile else {
            say("    (a fresh relay key for this run; give --relay-key-file FILE to use your own)")
            return
        }
        say("    deliver again with the same key:")
        say("    push-gateway deliver --url \(gatewayURL)\(deliveryPath) --relay-key-file \(keyFile) --grant \(grant)")
    }

    private mutating func record(title: String, _ response: HTTPResponse, expecting expected: Int) throws {
        let text = String(decoding: response.body, as: UTF8.self)
        say("<-- \(response.status) \(text)")
        steps.append(DemoStep(title: title, status: response.status, body: text))
        guard response.status == expected else {
            throw DemoError("\(title): expected \(expected), the gateway answered \(response.status)")
        }
    }

    /// A delivery asks for a minute (within every limit of docs/protocol.md §4.7).
    static let deliveryLifetime: Int64 = 60

    static func unixSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
}

/// The relay's secret key: the one in `--relay-key-file`, in the format `push-gateway deliver
/// --relay-key-file` reads (64 lowercase hex digits, one trailing newline allowed), or a fresh one.
enum DemoRelayKey {
    static func load(from path: String?) throws -> SchnorrSigningKey {
        guard let path else { return try fresh() }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DemoError("cannot read the relay key file")
        }
        var text = Substring(decoding: data, as: UTF8.self)
        if text.utf8.last == UInt8(ascii: "\n") { text = text.dropLast() }
        guard let bytes = Hex.decode(String(text), byteCount: 32, lowercaseOnly: true),
            let key = SchnorrSigningKey(secretKey: bytes)
        else {
            throw DemoError(
                "the relay key file must hold a secp256k1 secret key as 64 lowercase hex digits "
                    + "(a trailing newline is allowed)")
        }
        return key
    }

    /// A fresh BIP-340 key; the rare 32 random bytes outside the curve order are drawn again.
    static func fresh() throws -> SchnorrSigningKey {
        while true {
            if let key = SchnorrSigningKey(secretKey: try SecureRandom.bytes(32)) { return key }
        }
    }
}

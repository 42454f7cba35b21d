import Foundation
import PushAttest
import PushCrypto
import PushNostr
import PushRelayClient
import PushTestSupport

/// What the demo plays against: the gateway's public listener and the app profile it serves.
struct DemoSettings: Sendable {
    /// `http://host:port` of the public listener, no trailing slash.
    var gatewayURL: String
    /// `PUSH_GATEWAY_ORIGIN`, the prefix of every transcript audience (docs/protocol.md §3).
    var origin: String
    var profile: String
    var appID: String
    /// The profile's App Attest environment, `development` or `production` (chooses the AAGUID).
    var appAttestEnvironment: String
    /// The JSON-lines record file of `apns-mock`, shown after the delivery when given.
    var apnsRecordFile: String?
    /// The relay's secret key file (`--relay-key-file`); nil: a fresh key for this run.
    var relayKeyFile: String? = nil
}

/// Everything the demo saw, for callers that check it (tests) rather than read it.
struct DemoOutcome: Sendable {
    let steps: [DemoStep]
    /// The made-up device token the demo enrolled.
    let endpoint: String
    let requestID: String
    /// The relay's public key (hex) and the grant the delegation returned for it.
    let relayPublicKey: String
    let grant: String
    /// The `apns-mock` record of the delivery, when a record file was given.
    let apnsRecord: MockRecord?
}

/// One line of the `apns-mock` record file (`APNsMockRecord.jsonLine`), the parts the demo shows.
struct MockRecord: Sendable {
    let disposition: String
    let status: Int?
    /// Every header field in arrival order, pseudo-headers first.
    let fields: [(name: String, value: String)]
    let body: String

    func field(_ name: String) -> String? { fields.first { $0.name == name }?.value }

    /// Parses one JSON line; nil when it is not a record.
    init?(jsonLine: some Collection<UInt8>) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(jsonLine)) as? [String: Any],
            let disposition = object["disposition"] as? String, let headers = object["headers"] as? [[String]],
            headers.allSatisfy({ $0.count == 2 }), let encoded = object["body_base64"] as? String,
            let body = Base64.decode(encoded)
        else { return nil }
        self.disposition = disposition
        status = object["status"] as? Int
        fields = headers.map { ($0[0], $0[1]) }
        self.body = String(decoding: body, as: UTF8.self)
    }
}

/// Plays an iPhone app and a relay through the whole flow of docs/protocol.md §4: challenge, enroll
/// (synthetic attestation), challenge, delegate (synthetic assertion) to the relay's key, then a
/// NIP-98-signed delivery; prints each answer through `say`.
struct DemoFlow {
    static let installationsPath = "/v1/installations"
    static let delegationsPath = "/v1/delegations"
    static let deliveriesPath = "/v1/deliveries/apns"
    /// Lifetimes the demo asks for: a day for the installation, an hour for the grant (within every
    /// limit of docs/protocol.md §4).
    static let installationLifetime: Int64 = 86_400
    static let grantLifetime: Int64 = 3600

    let settings: DemoSettings
    let authority: SyntheticAppAttestAuthority
    let client: HTTPPostClient
    let say: (String) -> Void

    init(
        settings: DemoSettings, authority: SyntheticAppAttestAuthority,
        client: HTTPPostClient = HTTPPostClient(connectTimeoutSeconds: 5, totalTimeoutSeconds: 30),
        say: @escaping (String) -> Void
    ) {
        self.settings = settings
        self.authority = authority
        self.client = client
        self.say = say
    }

    func run() throws -> DemoOutcome {
        var exchange = DemoExchange(gatewayURL: settings.gatewayURL, client: client, say: say)
        let relay = try DemoRelayKey.load(from: settings.relayKeyFile)
        let aaguid =
            settings.appAttestEnvironment == "development"
            ? SyntheticAppAttestDevice.developmentAAGUID : SyntheticAppAttestDevice.productionAAGUID
        let device = try authority.makeDevice(appID: settings.appID, aaguid: aaguid)
        // A made-up APNs device token: 32 random bytes as lowercase hex, as iOS hands them out.
        let endpoint = Hex.encode(try SecureRandom.bytes(32))
        let now = DemoExchange.unixSeconds()

        say("Device: a synthetic App Attest key for \(settings.appID) (\(settings.appAttestEnvironment))")
        let first = try exchange.challenge(number: 1)

        let expiresAt = now + Self.installationLifetime
        let enrollTranscript = AppAttestTranscript.enroll(
            origin: settings.origin, challengeID: first.id, challenge: first.challenge, keyID: device.keyIDBase64,
            appProfile: settings.profile, endpoint: endpoint, endpointEpoch: 1, expiresAt: expiresAt)
        let attestation = try device.attestationObject(clientDataHash: enrollTranscript.clientDataHash)
        let enrolled = try exchange.post(
            "2. enroll: attestation under the local root, made-up device token \(endpoint)",
            Self.installationsPath,
            """
            {"v":1,"challenge_id":"\(first.id)","challenge":"\(first.challenge)",\
            "key_id":"\(device.keyIDBase64)","attestation":"\(Base64.encode(attestation))",\
            "app_profile":"\(settings.profile)","endpoint":"\(endpoint)","endpoint_epoch":1,\
            "expires_at":\(expiresAt)}
            """, expecting: 201)
        guard let handle = enrolled["installation_handle"] as? String else {
            throw DemoError("enroll: the answer has no installation_handle")
        }

        let second = try exchange.challenge(number: 3)
        let relayPubkey = relay.publicKey.hex
        let grantExpiresAt = now + Self.grantLifetime
        let delegateTranscript = AppAttestTranscript.delegate(
            origin: settings.origin, challengeID: second.id, challenge: second.challenge, installationHandle: handle,
            endpointEpoch: 1, generation: 1, relayPubkey: relayPubkey, notBefore: now, expiresAt: grantExpiresAt)
        // The first assertion of this App Attest key: counter 1.
        let assertion = try device.assertion(clientDataHash: delegateTranscript.clientDataHash, counter: 1)
        let delegated = try exchange.post(
            "4. delegate to the relay key \(relayPubkey) (assertion, counter 1)", Self.delegationsPath,
            """
            {"v":1,"challenge_id":"\(second.id)","challenge":"\(second.challenge)",\
            "installation_handle":"\(handle)","endpoint_epoch":1,"generation":1,\
            "relay_pubkey":"\(relayPubkey)","not_before":\(now),"expires_at":\(grantExpiresAt),\
            "assertion":"\(Base64.encode(assertion))"}
            """, expecting: 201)
        guard let grant = delegated["endpoint_grant"] as? String else {
            throw DemoError("delegate: the answer has no endpoint_grant")
        }
        say("    (the grant above is this demo's own; a real app hands it only to its relay)")

        let requestID = try exchange.deliver(
            title: "5. deliver", path: Self.deliveriesPath, grant: grant, relay: relay)

        var apnsRecord: MockRecord?
        if let file = settings.apnsRecordFile {
            let found = try Self.mockRecord(in: file, requestID: requestID)
            say("==> 6. what apns-mock received (\(file)):")
            say(Self.describe(found))
            apnsRecord = found
        }
        exchange.showRelaySide(
            relay: relay, keyFile: settings.relayKeyFile, grant: grant, deliveryPath: Self.deliveriesPath)
        return DemoOutcome(
            steps: exchange.steps, endpoint: endpoint, requestID: requestID, relayPublicKey: relayPubkey,
            grant: grant, apnsRecord: apnsRecord)
    }

    // MARK: - The mock's record

    /// The last line of the `apns-mock` record file whose `apns-id` is `requestID` (the gateway
    /// sends the delivery's request id as `apns-id`, docs/protocol.md §8).
    static func mockRecord(in file: String, requestID: String) throws -> MockRecord {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw DemoError("cannot read the apns-mock record file")
        }
        for line in data.split(separator: UInt8(ascii: "\n")).reversed() {
            if let record = MockRecord(jsonLine: line), record.field("apns-id") == requestID { return record }
        }
        throw DemoError("apns-mock recorded no request for this delivery")
    }

    /// A record as indented lines: status, every header (the provider token shortened: it is a
    /// bearer credential), and the notification body.
    static func describe(_ record: MockRecord) -> String {
        var lines = [
            "    disposition: \(record.disposition), answered status: \(record.status.map(String.init) ?? "none")"
        ]
        for (name, value) in record.fields {
            var shown = value
            if name == "authorization" {
                let token = value.split(separator: " ").last ?? ""
                shown = "bearer <ES256 provider token, \(token.count) characters, not shown>"
            }
            lines.append("    \(name): \(shown)")
        }
        lines.append("    body: \(record.body)")
        return lines.joined(separator: "\n")
    }
}

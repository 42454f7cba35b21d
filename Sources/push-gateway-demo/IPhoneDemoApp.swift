import Foundation
import PushAttest
import PushCrypto
import PushTestSupport

/// The iPhone app of the demo: a synthetic App Attest key under the local root, enrolled with an
/// attestation (docs/protocol.md §4.2), delegating with an assertion (§4.3), woken through APNs
/// (`/v1/deliveries/apns`, §4.7); its record is `apns-mock`'s.
struct IPhoneDemoApp: DemoApp {
    static let deliveriesPath = "/v1/deliveries/apns"

    /// The profile's App Attest environment, `development` or `production` (chooses the AAGUID).
    let appAttestEnvironment: String
    /// The JSON-lines record file of `apns-mock`, shown after the delivery when given.
    let apnsRecordFile: String?
    /// The App Attest key, of the app whose id it carries.
    let device: SyntheticAppAttestDevice
    /// A made-up APNs device token: 32 random bytes as lowercase hex, as iOS hands them out.
    let endpoint: String

    init(
        authority: SyntheticAppAttestAuthority, appID: String, appAttestEnvironment: String, apnsRecordFile: String?
    ) throws {
        self.appAttestEnvironment = appAttestEnvironment
        self.apnsRecordFile = apnsRecordFile
        device = try authority.makeDevice(
            appID: appID,
            aaguid: appAttestEnvironment == "development"
                ? SyntheticAppAttestDevice.developmentAAGUID : SyntheticAppAttestDevice.productionAAGUID)
        endpoint = Hex.encode(try SecureRandom.bytes(32))
    }

    var introduction: String { "Device: a synthetic App Attest key for \(device.appID) (\(appAttestEnvironment))" }

    func enrollment(
        settings: DemoSettings, challenge: (id: String, challenge: String), expiresAt: Int64
    ) throws -> (title: String, path: String, body: String) {
        let transcript = AppAttestTranscript.enroll(
            origin: settings.origin, challengeID: challenge.id, challenge: challenge.challenge,
            keyID: device.keyIDBase64, appProfile: settings.profile, endpoint: endpoint, endpointEpoch: 1,
            expiresAt: expiresAt)
        let attestation = try device.attestationObject(clientDataHash: transcript.clientDataHash)
        return (
            "2. enroll: attestation under the local root, made-up device token \(endpoint)", transcript.route.path,
            """
            {"v":1,"challenge_id":"\(challenge.id)","challenge":"\(challenge.challenge)",\
            "key_id":"\(device.keyIDBase64)","attestation":"\(Base64.encode(attestation))",\
            "app_profile":"\(settings.profile)","endpoint":"\(endpoint)","endpoint_epoch":1,\
            "expires_at":\(expiresAt)}
            """
        )
    }

    /// The first assertion of this App Attest key: counter 1.
    func delegationProof(for transcript: AppAttestTranscript) throws -> (name: String, bytes: [UInt8]) {
        ("assertion, counter 1", try device.assertion(clientDataHash: transcript.clientDataHash, counter: 1))
    }

    /// The last line of the `apns-mock` record file whose `apns-id` is `requestID` (the gateway
    /// sends the delivery's request id as `apns-id`, docs/protocol.md §8).
    func showRecord(requestID: String, say: (String) -> Void) throws -> MockRecord? {
        guard let file = apnsRecordFile else { return nil }
        let record = try lastRecord(in: file, standIn: "apns-mock", reading: MockRecord.init(jsonLine:)) {
            $0.field("apns-id") == requestID
        }
        say("==> 6. what apns-mock received (\(file)):")
        say(Self.describe(record))
        return record
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

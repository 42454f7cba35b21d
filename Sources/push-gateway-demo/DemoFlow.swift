import Foundation
import PushAttest
import PushCrypto
import PushRelayClient

/// What a demo plays against, whatever the platform: the gateway's public listener and the app
/// profile it serves.
struct DemoSettings: Sendable {
    /// `http://host:port` of the public listener, no trailing slash.
    var gatewayURL: String
    /// `PUSH_GATEWAY_ORIGIN`, the prefix of every transcript audience (docs/protocol.md §3).
    var origin: String
    var profile: String
    /// The relay's secret key file (`--relay-key-file`); nil: a fresh key for this run.
    var relayKeyFile: String? = nil
}

/// Everything a demo saw, for callers that check it (tests) rather than read it.
struct DemoOutcome<Record: Sendable>: Sendable {
    let steps: [DemoStep]
    /// The made-up push token the demo enrolled.
    let endpoint: String
    let requestID: String
    /// The relay's public key (hex) and the grant the delegation returned for it.
    let relayPublicKey: String
    let grant: String
    /// The provider stand-in's record of the delivery, when a record file was given.
    let record: Record?
}

/// What the iPhone and the Android apps do differently within docs/protocol.md §4's one flow: the
/// device's key and its proofs, the enrollment route and body, the delivery route, and where the
/// provider's stand-in records the wake.
protocol DemoApp {
    /// The stand-in's record of the delivery (apns-mock's, fcm-mock's).
    associatedtype Record: Sendable

    /// The delivery route a grant of this platform is good for (docs/protocol.md §4.7).
    static var deliveriesPath: String { get }
    /// Who the device is, the demo's first line.
    var introduction: String { get }
    /// The made-up push token the demo enrolls.
    var endpoint: String { get }
    /// Step 2, the enrollment answering `challenge`: its title, path and body.
    func enrollment(
        settings: DemoSettings, challenge: (id: String, challenge: String), expiresAt: Int64
    ) throws -> (title: String, path: String, body: String)
    /// Step 4's proof over the delegate transcript (docs/protocol.md §3), and how the step names it.
    func delegationProof(for transcript: AppAttestTranscript) throws -> (name: String, bytes: [UInt8])
    /// Step 6: the stand-in's record of the delivery `requestID`, shown through `say`; nil when no
    /// record file was given.
    func showRecord(requestID: String, say: (String) -> Void) throws -> Record?
}

/// Plays an app and a relay through the whole flow of docs/protocol.md §4: challenge, enroll (the
/// app's attestation), challenge, delegate (the app's proof over the §3 transcript) to the relay's
/// key, then the relay's NIP-98-signed delivery; prints each answer through `say`.
struct DemoFlow<App: DemoApp> {
    /// Lifetimes the demo asks for: a day for the installation, an hour for the grant (within every
    /// limit of docs/protocol.md §4).
    static var installationLifetime: Int64 { 86_400 }
    static var grantLifetime: Int64 { 3600 }

    let settings: DemoSettings
    let app: App
    let client: HTTPPostClient
    let say: (String) -> Void

    init(
        settings: DemoSettings, app: App,
        client: HTTPPostClient = HTTPPostClient(connectTimeoutSeconds: 5, totalTimeoutSeconds: 30),
        say: @escaping (String) -> Void
    ) {
        self.settings = settings
        self.app = app
        self.client = client
        self.say = say
    }

    func run() throws -> DemoOutcome<App.Record> {
        var exchange = DemoExchange(gatewayURL: settings.gatewayURL, client: client, say: say)
        let relay = try DemoRelayKey.load(from: settings.relayKeyFile)
        let now = DemoExchange.unixSeconds()

        say(app.introduction)
        let first = try exchange.challenge(number: 1)
        let enrollment = try app.enrollment(
            settings: settings, challenge: first, expiresAt: now + Self.installationLifetime)
        let enrolled = try exchange.post(enrollment.title, enrollment.path, enrollment.body, expecting: 201)
        guard let handle = enrolled["installation_handle"] as? String else {
            throw DemoError("enroll: the answer has no installation_handle")
        }

        let second = try exchange.challenge(number: 3)
        let relayPubkey = relay.publicKey.hex
        let grantExpiresAt = now + Self.grantLifetime
        // The delegate transcript is the same for both platforms (docs/protocol.md §3); only the proof
        // over it differs.
        let transcript = AppAttestTranscript.delegate(
            origin: settings.origin, challengeID: second.id, challenge: second.challenge, installationHandle: handle,
            endpointEpoch: 1, generation: 1, relayPubkey: relayPubkey, notBefore: now, expiresAt: grantExpiresAt)
        let proof = try app.delegationProof(for: transcript)
        let delegated = try exchange.post(
            "4. delegate to the relay key \(relayPubkey) (\(proof.name))", transcript.route.path,
            """
            {"v":1,"challenge_id":"\(second.id)","challenge":"\(second.challenge)",\
            "installation_handle":"\(handle)","endpoint_epoch":1,"generation":1,\
            "relay_pubkey":"\(relayPubkey)","not_before":\(now),"expires_at":\(grantExpiresAt),\
            "assertion":"\(Base64.encode(proof.bytes))"}
            """, expecting: 201)
        guard let grant = delegated["endpoint_grant"] as? String else {
            throw DemoError("delegate: the answer has no endpoint_grant")
        }
        say("    (the grant above is this demo's own; a real app hands it only to its relay)")

        let requestID = try exchange.deliver(
            title: "5. deliver", path: App.deliveriesPath, grant: grant, relay: relay)
        let record = try app.showRecord(requestID: requestID, say: say)
        exchange.showRelaySide(
            relay: relay, keyFile: settings.relayKeyFile, grant: grant, deliveryPath: App.deliveriesPath)
        return DemoOutcome(
            steps: exchange.steps, endpoint: app.endpoint, requestID: requestID, relayPublicKey: relayPubkey,
            grant: grant, record: record)
    }
}

/// The last line of the JSON-lines record file `file` that `matches`, read as `Record` (lines
/// that are not records are skipped); `stand-in` names the mock in the errors.
func lastRecord<Record>(
    in file: String, standIn: String, reading: (ArraySlice<UInt8>) -> Record?, where matches: (Record) -> Bool
) throws -> Record {
    guard let data = FileManager.default.contents(atPath: file) else {
        throw DemoError("cannot read the \(standIn) record file")
    }
    for line in [UInt8](data).split(separator: UInt8(ascii: "\n")).reversed() {
        if let record = reading(line), matches(record) { return record }
    }
    throw DemoError("\(standIn) recorded nothing for this delivery")
}

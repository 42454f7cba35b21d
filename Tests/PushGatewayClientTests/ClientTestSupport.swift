import Foundation
import PushCrypto
import PushGatewayClient
import PushTestSupport
import Synchronization

/// The repository checkout these tests run from.
let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// App Attest as Apple runs it, on the synthetic authority (Tests/PushTestSupport): keys are
/// attested once (a second `attestKey` is `invalidKey`, docs/decisions/0203) and assertion counters
/// grow. `attestKey` can be made to answer `serverUnavailable` a number of times first.
final class SyntheticAppAttestService: AppAttestService {
    struct AttestCall: Hashable {
        let keyID: String
        let clientDataHash: Data
    }

    private struct State {
        var devices: [String: SyntheticAppAttestDevice] = [:]
        var counters: [String: UInt32] = [:]
        var attested: Set<String> = []
        var generatedKeys: [String] = []
        var attestCalls: [AttestCall] = []
        var unavailableAttestations = 0
        var lostKeys: Set<String> = []
    }

    let authority: SyntheticAppAttestAuthority
    let appID: String
    let isSupported: Bool
    private let state = Mutex(State())

    init(authority: SyntheticAppAttestAuthority, appID: String = "ABCDE12345.xyz.buzz.app", isSupported: Bool = true) {
        self.authority = authority
        self.appID = appID
        self.isSupported = isSupported
    }

    /// Every key id `generateKey` made, in order.
    var generatedKeys: [String] { state.withLock { $0.generatedKeys } }
    /// Every `attestKey` call, in order, including those answered `serverUnavailable`.
    var attestCalls: [AttestCall] { state.withLock { $0.attestCalls } }

    /// The next `count` calls of `attestKey` answer `serverUnavailable`.
    func makeAttestationUnavailable(times count: Int) { state.withLock { $0.unavailableAttestations = count } }

    /// The key becomes unusable, as after a restore to another device.
    func loseKey(_ keyID: String) { _ = state.withLock { $0.lostKeys.insert(keyID) } }

    /// The assertion counter of `keyID` so far.
    func counter(_ keyID: String) -> UInt32 { state.withLock { $0.counters[keyID] ?? 0 } }

    func generateKey() async throws -> String {
        guard isSupported else { throw AppAttestError.unsupported }
        let device = try authority.makeDevice(appID: appID)
        state.withLock {
            $0.devices[device.keyIDBase64] = device
            $0.generatedKeys.append(device.keyIDBase64)
        }
        return device.keyIDBase64
    }

    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        let device = try state.withLock { state throws -> SyntheticAppAttestDevice in
            state.attestCalls.append(AttestCall(keyID: keyID, clientDataHash: clientDataHash))
            if state.unavailableAttestations > 0 {
                state.unavailableAttestations -= 1
                throw AppAttestError.serverUnavailable
            }
            guard let device = state.devices[keyID], !state.attested.contains(keyID), !state.lostKeys.contains(keyID)
            else { throw AppAttestError.invalidKey }
            state.attested.insert(keyID)
            return device
        }
        return Data(try device.attestationObject(clientDataHash: [UInt8](clientDataHash)))
    }

    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        let (device, counter) = try state.withLock { state throws -> (SyntheticAppAttestDevice, UInt32) in
            guard let device = state.devices[keyID], state.attested.contains(keyID), !state.lostKeys.contains(keyID)
            else { throw AppAttestError.invalidKey }
            let counter = (state.counters[keyID] ?? 0) + 1
            state.counters[keyID] = counter
            return (device, counter)
        }
        return Data(try device.assertion(clientDataHash: [UInt8](clientDataHash), counter: counter))
    }
}

/// One request a transport saw.
struct SentRequest: Sendable, Equatable {
    let path: String
    let body: Data

    /// The body's JSON object.
    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }

    func string(_ name: String) -> String? { object[name] as? String }
    func integer(_ name: String) -> Int64? { (object[name] as? NSNumber)?.int64Value }
}

/// What a scripted transport does with one request.
enum ScriptedAnswer: Sendable {
    /// Answer this without passing the request on.
    case answer(HTTPResponse)
    /// Fail as a network does, before the request arrives anywhere.
    case dropRequest
    /// Pass the request on (to `next`), then fail as if the answer were lost on the way back.
    case dropAnswer
    /// Pass the request on and return its answer.
    case pass
}

/// A transport that decides per request (by route and the how-manieth request to that route) what
/// happens, passing the rest to `next` (a live gateway) and recording every request.
final class ScriptedTransport: GatewayTransport {
    struct Failure: Error {}

    private let next: (any GatewayTransport)?
    private let script: @Sendable (_ path: String, _ index: Int) -> ScriptedAnswer
    private let sent = Mutex<[SentRequest]>([])

    init(
        next: (any GatewayTransport)? = nil,
        _ script: @escaping @Sendable (_ path: String, _ index: Int) -> ScriptedAnswer = { _, _ in .pass }
    ) {
        self.next = next
        self.script = script
    }

    /// Every request, in order, including those dropped.
    var requests: [SentRequest] { sent.withLock { $0 } }

    func requests(to route: AppRoute) -> [SentRequest] { requests.filter { $0.path == route.path } }

    func post(_ url: URL, body: Data) async throws -> HTTPResponse {
        let path = url.path
        let index = sent.withLock { sent in
            sent.append(SentRequest(path: path, body: body))
            return sent.filter { $0.path == path }.count - 1
        }
        switch script(path, index) {
        case .answer(let response): return response
        case .dropRequest: throw Failure()
        case .dropAnswer:
            _ = try await forward(url, body)
            throw Failure()
        case .pass: return try await forward(url, body)
        }
    }

    private func forward(_ url: URL, _ body: Data) async throws -> HTTPResponse {
        guard let next else { throw Failure() }
        return try await next.post(url, body: body)
    }
}

/// Canned gateway answers.
enum Answers {
    static func json(_ status: Int, _ body: String, headers: [String: String] = [:]) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: headers.merging(["Content-Type": "application/json; charset=utf-8"]) { a, _ in a },
            body: Data(body.utf8))
    }

    static func error(_ status: Int, _ code: String, retryAfter: Int? = nil) -> HTTPResponse {
        json(status, #"{"error":"\#(code)"}"#, headers: retryAfter.map { ["Retry-After": String($0)] } ?? [:])
    }

    /// A fresh, well-formed challenge (the scripted tests do not verify it).
    static func challenge() -> HTTPResponse {
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let value = Base64.encode(bytes).replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
        return json(
            200,
            #"{"challenge_id":"\#(UUID().uuidString.lowercased())","challenge":"\#(value)","expires_at":2000000300}"#)
    }

    static func enrolled(expiresAt: Int64 = 2_000_000_000) -> HTTPResponse {
        json(
            201,
            #"{"installation_handle":"\#(UUID().uuidString.lowercased())","endpoint_epoch":1,"expires_at":\#(expiresAt)}"#
        )
    }

    static func delegated() -> HTTPResponse { json(201, #"{"endpoint_grant":"grant-\#(UUID().uuidString)"}"#) }
    static func rotated() -> HTTPResponse { json(200, #"{"status":"rotated"}"#) }
    static func revoked() -> HTTPResponse { json(200, #"{"status":"revoked"}"#) }
}

/// Waits a retry policy asked for, recorded instead of slept.
final class RecordedSleeps: Sendable {
    private let waits = Mutex<[TimeInterval]>([])

    var all: [TimeInterval] { waits.withLock { $0 } }

    /// A policy without jitter that records its waits here.
    func policy(maxAttempts: Int = 6, longestRetryAfter: TimeInterval = 60) -> RetryPolicy {
        RetryPolicy(
            maxAttempts: maxAttempts, longestRetryAfter: longestRetryAfter, jitter: false,
            sleep: { [self] seconds in self.waits.withLock { $0.append(seconds) } })
    }
}

/// 32 random bytes as lowercase hex, as APNs device tokens look.
func randomEndpoint() -> String {
    PushGatewayClient.endpoint(fromDeviceToken: Data((0..<32).map { _ in UInt8.random(in: 0...255) }))
}

/// 64 lowercase hex characters; the gateway also wants a valid secp256k1 x-only point, which the
/// live tests get from PushNostr.
let scriptedRelay = String(repeating: "ab", count: 32)

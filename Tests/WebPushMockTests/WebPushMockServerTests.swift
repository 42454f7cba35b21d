import Foundation
import PushCrypto
import PushTestSupport
import PushWebPush
import Testing
import WebPushMock

/// webpush-mock in process, over real TLS sockets, driven by curl (an independent client) over h2
/// and HTTP/1.1 (docs/decisions/0800, docs/protocol.md §8b).
@Suite("webpush-mock checks, decrypts, records and answers Web Push messages", .tags(.process), .testBodyThreads)
struct WebPushMockServerTests {
    let certificates: APNsTestCertificates
    let server: WebPushMockServer
    let signer: VAPIDSigner

    init() throws {
        certificates = try APNsTestCertificates.shared()
        server = try WebPushMockServer(
            certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile)
        signer = VAPIDSigner(key: try P256PrivateKey.generate(), subject: "mailto:ops@example.org")
    }

    func send(
        _ request: PushRequest, to subscription: WebPushMockServer.Subscription, version: Curl.Version = .http2
    ) throws -> Curl.Answer {
        try Curl.post(subscription.pushResource, request, version: version, caFile: certificates.caFile)
    }

    @Test(
        "a wake from WebPushEncryption and VAPIDSigner is decrypted to {\"reconnect\":1}, VAPID-verified and recorded, over h2 and over HTTP/1.1 alike",
        arguments: [Curl.Version.http2, .http11])
    func wakeIsDecryptedOverEitherProtocol(version: Curl.Version) throws {
        defer { server.stop() }
        let subscription = try server.subscribe()
        // The endpoint is §8b's string, cut at fixed positions, pointing at this mock.
        let endpoint = try requireEndpoint(subscription.endpoint)
        #expect(endpoint.url == subscription.pushResource)
        #expect(subscription.pushResource == "https://127.0.0.1:\(server.port)/push/\(subscription.id)")
        #expect(endpoint.origin == server.origin)

        let answer = try send(
            try PushRequest.wake(to: subscription.endpoint, signer: signer), to: subscription, version: version)
        #expect(answer.status == 201, "\(answer.body)")
        #expect(answer.httpVersion == (version == .http2 ? "2" : "1.1"))
        #expect(answer.headers["location"]?.hasPrefix("\(server.origin)/message/") == true)
        #expect(answer.headers["ttl"] == "60")

        let messages = server.messages
        try #require(messages.count == 1)
        let message = messages[0]
        #expect(message.protocolName == (version == .http2 ? "h2" : "http/1.1"))
        #expect(message.subscriptionID == subscription.id)
        #expect(message.plaintextText == #"{"reconnect":1}"#)
        #expect(message.vapid?.verdict == .valid)
        #expect(message.vapid?.audience == server.origin)
        #expect(message.vapid?.subject == "mailto:ops@example.org")
        #expect(message.bodyByteCount == 118 && message.recordSize == 4096 && message.keyIDLength == 65)
        #expect(message.ttl == "60" && message.urgency == "high" && message.topic == "reconnect")
        #expect(message.contentEncoding == "aes128gcm" && message.contentType == "application/octet-stream")
        #expect(message.problem == nil && message.status == 201)
        #expect(server.connectionCount == 1)
    }

    /// A token made by hand: `claims` signed by `key` (raw R ‖ S unless `der`), presented with `k`.
    static func authorization(
        claims: String, key: P256PrivateKey, presentedKey: P256PublicKey? = nil, der: Bool = false
    ) throws -> String {
        let input =
            Base64.encodeURLNoPadding(Array(#"{"typ":"JWT","alg":"ES256"}"#.utf8)) + "."
            + Base64.encodeURLNoPadding(Array(claims.utf8))
        let signature =
            der ? try key.derSignature(for: Array(input.utf8)) : try key.es256Signature(for: Array(input.utf8))
        let k = Base64.encodeURLNoPadding((presentedKey ?? key.publicKey).uncompressedPoint)
        return "vapid t=\(input).\(Base64.encodeURLNoPadding(signature)), k=\(k)"
    }

    @Test(
        "absent VAPID is 401 with WWW-Authenticate: vapid; a bad signature, a DER signature, a wrong aud, a past or too distant exp, a bad sub and another key than the subscription's are 403 (RFC 8292), each recorded with its verdict"
    )
    func vapidRefusals() throws {
        defer { server.stop() }
        let other = VAPIDSigner(key: try P256PrivateKey.generate(), subject: "mailto:ops@example.org")
        let restricted = try server.subscribe(applicationServerKey: other.publicKey)
        let open = try server.subscribe()
        let now = PushRequest.now()
        let key = try P256PrivateKey.generate()
        let origin = server.origin
        let claims = #"{"aud":"\#(origin)","exp":\#(now + 3600),"sub":"mailto:ops@example.org"}"#
        let cases: [(String, String?, WebPushMockServer.Subscription, Int, VAPIDVerification.Verdict)] = [
            ("absent", nil, open, 401, .absent),
            ("bearer scheme", "Bearer abc", open, 401, .absent),
            ("no k", "vapid t=a.b.c", open, 403, .malformed),
            (
                "signed by another key",
                try Self.authorization(claims: claims, key: key, presentedKey: try P256PrivateKey.generate().publicKey),
                open, 403, .invalidSignature
            ),
            (
                "DER signature", try Self.authorization(claims: claims, key: key, der: true), open, 403,
                .invalidSignature
            ),
            (
                "wrong aud", try signer.authorization(origin: "https://push.example.net", now: now), open, 403,
                .wrongAudience
            ),
            ("aud with a path", try signer.authorization(origin: origin + "/", now: now), open, 403, .wrongAudience),
            ("expired", try signer.authorization(origin: origin, now: now - 50_000), open, 403, .expired),
            (
                "exp beyond 24 h", try signer.authorization(origin: origin, now: now + 50_000), open, 403,
                .expiresTooLate
            ),
            (
                "sub not mailto or https",
                try VAPIDSigner(key: key, subject: "ops@example.org").authorization(origin: origin, now: now), open,
                403, .badSubject
            ),
            (
                "another key than the subscription's", try signer.authorization(origin: origin, now: now), restricted,
                403, .keyMismatch
            ),
        ]
        for (name, authorization, subscription, status, verdict) in cases {
            let request = try PushRequest.wake(to: subscription.endpoint, signer: signer).setting(
                "Authorization", authorization)
            let answer = try send(request, to: subscription)
            #expect(answer.status == status, "\(name): \(answer.body)")
            if status == 401 { #expect(answer.headers["www-authenticate"] == "vapid", "\(name)") }
            let message = try #require(server.messages.last)
            #expect(message.vapid?.verdict == verdict, "\(name)")
            #expect(message.problem == "vapid_\(verdict.rawValue)" && message.status == status, "\(name)")
            #expect(message.plaintext == nil, "\(name): nothing is decrypted for a refused credential")
        }
        // The same subscription accepts its own key.
        let own = try send(try PushRequest.wake(to: restricted.endpoint, signer: other), to: restricted)
        #expect(own.status == 201)
    }

    @Test(
        "each §8b header missing or different is 400 naming it; a body that is not the 118-byte wake is 400, over 4096 bytes 413; all recorded"
    )
    func headerAndBodyRefusals() throws {
        defer { server.stop() }
        let subscription = try server.subscribe()
        let endpoint = try requireEndpoint(subscription.endpoint)
        let wake = try PushRequest.wake(to: subscription.endpoint, signer: signer)
        let padded = try PushRequest.paddedWakeBody(to: endpoint, padding: 3)
        var garbled = wake.body
        garbled[garbled.count - 1] ^= 1
        var otherRecordSize = wake.body
        otherRecordSize[19] = 0x01  // rs 4097: the UnifiedPush connector would refuse it
        let cases: [(String, PushRequest, Int, String)] = [
            ("no TTL", wake.setting("TTL", nil), 400, "ttl_missing"),
            ("TTL not a number", wake.setting("TTL", "-1"), 400, "ttl_invalid"),
            ("TTL over 28 days", wake.setting("TTL", "2419201"), 400, "ttl_invalid"),
            ("no Urgency", wake.setting("Urgency", nil), 400, "urgency"),
            ("Urgency normal", wake.setting("Urgency", "normal"), 400, "urgency"),
            ("no Topic", wake.setting("Topic", nil), 400, "topic"),
            ("Content-Encoding aesgcm", wake.setting("Content-Encoding", "aesgcm"), 400, "content_encoding"),
            ("Content-Type text", wake.setting("Content-Type", "text/plain"), 400, "content_type"),
            (
                "another plaintext",
                PushRequest(headers: wake.headers, body: try WebPushEncryption.encrypt(Array("{}".utf8), to: endpoint)),
                400, "plaintext"
            ),
            ("padding", PushRequest(headers: wake.headers, body: padded), 400, "body_length"),
            ("rs 4097", PushRequest(headers: wake.headers, body: otherRecordSize), 400, "record_size"),
            ("garbled record", PushRequest(headers: wake.headers, body: garbled), 400, "decryption_failed"),
            (
                "4097 bytes", PushRequest(headers: wake.headers, body: [UInt8](repeating: 7, count: 4097)), 413,
                "body_too_large"
            ),
        ]
        for (index, (name, request, status, problem)) in cases.enumerated() {
            let answer = try send(request, to: subscription, version: index % 2 == 0 ? .http2 : .http11)
            #expect(answer.status == status, "\(name): \(answer.body)")
            #expect(answer.body == #"{"problem":"\#(problem)"}"#, "\(name)")
            let message = try #require(server.messages.last)
            #expect(message.problem == problem && message.status == status, "\(name)")
        }
        // A padded body opens (the record shows what it held) but is not §8b's body.
        #expect(server.messages[9].plaintextText == #"{"reconnect":1}"# && server.messages[9].bodyByteCount == 121)
        #expect(server.messages.count == cases.count)
    }

    @Test(
        "every scripted status is answered in order — 404, 410, 413, 429 with Retry-After, 500, 301 with Location — then the default 201"
    )
    func scriptedStatuses() throws {
        defer { server.stop() }
        let script = WebPushMockScript(replies: [
            WebPushMockReply(status: 404), WebPushMockReply(status: 410), WebPushMockReply(status: 413),
            WebPushMockReply(status: 429, retryAfter: "30"), WebPushMockReply(status: 500),
            WebPushMockReply(status: 301, location: "https://10.0.0.1/elsewhere"),
        ])
        let subscription = try server.subscribe(script: script)
        let bystander = try server.subscribe()
        var statuses: [Int] = []
        for round in 0..<7 {
            let version: Curl.Version = round % 2 == 0 ? .http11 : .http2
            let answer = try send(
                try PushRequest.wake(to: subscription.endpoint, signer: signer), to: subscription, version: version)
            statuses.append(answer.status)
            if answer.status == 429 { #expect(answer.headers["retry-after"] == "30") }
            if answer.status == 301 { #expect(answer.headers["location"] == "https://10.0.0.1/elsewhere") }
            // Another subscription's script is its own.
            #expect(try send(try PushRequest.wake(to: bystander.endpoint, signer: signer), to: bystander).status == 201)
        }
        #expect(statuses == [404, 410, 413, 429, 500, 301, 201])
        let recorded = server.messages.filter { $0.subscriptionID == subscription.id }
        #expect(recorded.map(\.status) == statuses.map(Optional.init))
        #expect(recorded.allSatisfy { $0.plaintextText == #"{"reconnect":1}"# && $0.problem == nil })

        server.setScript(WebPushMockScript(defaultReply: WebPushMockReply(status: 410)), for: subscription)
        #expect(
            try send(try PushRequest.wake(to: subscription.endpoint, signer: signer), to: subscription).status == 410)
    }

    @Test(
        "a scripted close drops the connection and a scripted stall never answers, over either protocol; both are recorded decrypted without a status",
        .tags(.slow), arguments: [Curl.Version.http2, .http11])
    func closeAndStall(version: Curl.Version) throws {
        defer { server.stop() }
        let subscription = try server.subscribe(
            script: WebPushMockScript(replies: [WebPushMockReply(action: .close), WebPushMockReply(action: .stall)]))
        let wake = try PushRequest.wake(to: subscription.endpoint, signer: signer)
        let closed = try Curl.exitStatus(
            subscription.pushResource, wake, version: version, caFile: certificates.caFile, maxTime: 30)
        #expect(closed != 0 && closed != 28, "curl exited \(closed) for a dropped connection")
        // The stall holds the request until curl gives up.
        let stalled = try Curl.exitStatus(
            subscription.pushResource, wake, version: version, caFile: certificates.caFile, maxTime: 2)
        #expect(stalled == 28)
        let messages = server.messages
        try #require(messages.count == 2)
        #expect(messages.allSatisfy { $0.status == nil && $0.problem == nil })
        #expect(messages.allSatisfy { $0.plaintextText == #"{"reconnect":1}"# })
        // The script is used up: the next message gets the default 201.
        #expect(try send(wake, to: subscription, version: version).status == 201)
    }

    @Test("an HTTP/1.1 client that asks Expect: 100-continue gets its 100 Continue and then the answer")
    func expectContinue() throws {
        defer { server.stop() }
        let subscription = try server.subscribe()
        let wake = try PushRequest.wake(to: subscription.endpoint, signer: signer)
        // Without the interim answer curl would wait 60 s before sending the body, past --max-time 30.
        let answer = try Curl.run(
            subscription.pushResource, headers: wake.headers + [("Expect", "100-continue")], body: wake.body,
            version: .http11, caFile: certificates.caFile, extraArguments: ["--expect100-timeout", "60"])
        #expect(answer.status == 201)
        #expect(server.messages.first?.plaintextText == #"{"reconnect":1}"#)
    }

    @Test("a push resource the mock never issued or has forgotten is 404, recorded without a subscription")
    func unknownSubscription() throws {
        defer { server.stop() }
        let subscription = try server.subscribe()
        let wake = try PushRequest.wake(to: subscription.endpoint, signer: signer)
        server.remove(subscription)
        let answer = try send(wake, to: subscription)
        #expect(answer.status == 404)
        let message = try #require(server.messages.last)
        #expect(message.subscriptionID == nil && message.problem == "unknown_subscription" && message.vapid == nil)
    }

    @Test(
        "POST /subscribe over either protocol hands out a §8b endpoint with its script and VAPID restriction; a bad script is 400"
    )
    func subscribeOverHTTP() throws {
        defer { server.stop() }
        let body = Array(
            #"{"vapid_key":"\#(signer.publicKey)","script":{"replies":[{"status":429,"retry_after":7}],"default":{"status":410}}}"#
                .utf8)
        let created = try Curl.run(
            server.origin + WebPushMockServer.subscribePath, headers: [("Content-Type", "application/json")],
            body: body,
            version: .http11, caFile: certificates.caFile)
        #expect(created.status == 201, "\(created.body)")
        let object = try #require(JSONSerialization.jsonObject(with: Data(created.body.utf8)) as? [String: String])
        let endpointText = try #require(object["endpoint"])
        let endpoint = try requireEndpoint(endpointText)
        #expect(object["push_resource"] == endpoint.url && created.headers["location"] == endpoint.url)
        let resource = endpoint.url
        let first = try Curl.post(
            resource, try PushRequest.wake(to: endpointText, signer: signer), version: .http2,
            caFile: certificates.caFile)
        #expect(first.status == 429 && first.headers["retry-after"] == "7")
        let second = try Curl.post(
            resource, try PushRequest.wake(to: endpointText, signer: signer), version: .http2,
            caFile: certificates.caFile)
        #expect(second.status == 410)
        let stranger = VAPIDSigner(key: try P256PrivateKey.generate(), subject: "https://example.org")
        let refused = try Curl.post(
            resource, try PushRequest.wake(to: endpointText, signer: stranger), version: .http2,
            caFile: certificates.caFile)
        #expect(refused.status == 403)

        for bad in [#"{"script":{"replies":[{"action":"dance"}]}}"#, #"{"vapid_key":"AAAA"}"#, "[1]", #"{"extra":1}"#] {
            let answer = try Curl.run(
                server.origin + WebPushMockServer.subscribePath, headers: [], body: Array(bad.utf8), version: .http2,
                caFile: certificates.caFile)
            #expect(answer.status == 400, "\(bad): \(answer.body)")
        }
    }
}

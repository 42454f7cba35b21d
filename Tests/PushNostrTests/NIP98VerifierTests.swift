import PushCrypto
import PushTestSupport
import Testing

@testable import PushNostr

@Suite("NIP-98 verification of delivery requests (docs/protocol.md §6)", .testBodyThreads)
struct NIP98VerifierTests {
    static let now: Int64 = 1_800_000_000
    static let signedURL = "https://push.example.com/v1/deliveries/apns"
    static let body = Array(#"{"v":1,"request_id":"7d3c1f0e-3c52-4c8e-9a51-0f9b1e2d3c4a"}"#.utf8)
    static let key = SchnorrSigningKey(secretKey: SHA256.hash(Array("relay secret".utf8)))!
    static let auxiliaryRandomness = SHA256.hash(Array("aux".utf8))

    /// The URL a request for `signedURL` arrives with behind a TLS proxy.
    static let receivedURL = ReceivedRequestURL(
        host: "push.example.com", forwardedProto: "https", requestTarget: "/v1/deliveries/apns")

    let verifier = NIP98Verifier()

    static func event(
        url: String = signedURL, method: String = "POST", body: [UInt8] = body, createdAt: Int64 = now,
        kind: Int64 = NIP98Verifier.eventKind, tags: [[String]]? = nil, content: String = ""
    ) -> NostrEvent {
        let payload = Hex.encode(SHA256.hash(body))
        return NostrEvent(
            signedBy: key, createdAt: createdAt, kind: kind,
            tags: tags ?? [["u", url], ["method", method], ["payload", payload]], content: content,
            auxiliaryRandomness: auxiliaryRandomness)
    }

    static func header(_ event: NostrEvent) -> String {
        NIP98Signer.authorizationHeader(for: event)
    }

    /// A header whose event JSON was edited after signing.
    static func header(editing event: NostrEvent, _ edit: (String) -> String) -> String {
        "Nostr " + Base64.encode(Array(edit(String(decoding: event.json, as: UTF8.self)).utf8))
    }

    func verify(
        _ header: String?, url: ReceivedRequestURL? = receivedURL, method: String = "POST", body: [UInt8] = body,
        now: Int64 = now, verifier: NIP98Verifier? = nil
    ) -> Result<NIP98Authorization, NostrError> {
        (verifier ?? self.verifier).verify(authorization: header, requestURL: url, method: method, body: body, now: now)
    }

    func failure(_ result: Result<NIP98Authorization, NostrError>) -> NostrError.Code? {
        if case .failure(let failure) = result { return failure.code }
        return nil
    }

    // MARK: Accepted

    @Test("a correctly signed header is accepted and yields the relay key, event id and created_at")
    func accepted() throws {
        let event = Self.event()
        let authorization = try verify(Self.header(event)).get()
        #expect(authorization.relayPublicKey == Self.key.publicKey)
        #expect(authorization.eventID == event.id)
        #expect(authorization.createdAt == Self.now)
    }

    @Test("NIP98Signer's event carries exactly the u, method and payload tags")
    func signerTags() {
        let event = NIP98Signer.event(
            url: Self.signedURL, method: "POST", body: Self.body, createdAt: Self.now, key: Self.key,
            auxiliaryRandomness: Self.auxiliaryRandomness)
        #expect(event == Self.event())
        #expect(event.tags.map { $0[0] } == ["u", "method", "payload"])
    }

    /// A header whose base64 ends in padding (the event JSON length is not a multiple of 3).
    static func paddedHeader() -> String {
        let contents = ["", "x", "xy"]
        let padded = contents.map { Self.event(content: $0) }.first { $0.json.count % 3 != 0 }!
        return Self.header(padded)
    }

    @Test("unpadded base64 is accepted as well as padded")
    func unpadded() throws {
        let header = Self.paddedHeader()
        #expect(header.hasSuffix("="))
        #expect(throws: Never.self) { try verify(header).get() }
        #expect(throws: Never.self) { try verify(String(header.filter { $0 != "=" })).get() }
    }

    @Test("the auth-scheme is case-insensitive and may be followed by several spaces (RFC 9110 §11.1, §11.4)")
    func schemeSpelling() throws {
        let credentials = Self.header(Self.event()).dropFirst("Nostr ".count)
        for prefix in ["nostr ", "NOSTR ", "nOsTr ", "Nostr   "] {
            #expect(throws: Never.self) { try verify(prefix + credentials).get() }
        }
    }

    @Test("created_at exactly 60 s old or exactly 30 s ahead is accepted")
    func boundaryTimes() {
        #expect(failure(verify(Self.header(Self.event(createdAt: Self.now - 60)))) == nil)
        #expect(failure(verify(Self.header(Self.event(createdAt: Self.now + 30)))) == nil)
    }

    @Test("other tags, and extra elements in the required tags, are ignored")
    func otherTags() {
        let payload = Hex.encode(SHA256.hash(Self.body))
        let tags = [
            ["nonce", "123"], ["u", Self.signedURL, "extra"], [], ["t"], ["method", "POST"], ["payload", payload],
            ["U", "https://elsewhere"],
        ]
        #expect(failure(verify(Self.header(Self.event(tags: tags)))) == nil)
    }

    @Test("an empty body is hashed like any other")
    func emptyBody() {
        #expect(failure(verify(Self.header(Self.event(body: [])), body: [])) == nil)
        #expect(failure(verify(Self.header(Self.event(body: [])))) == .payloadMismatch)
    }

    // MARK: Header

    @Test("a missing header fails")
    func missingHeader() {
        #expect(failure(verify(nil)) == .missingHeader)
    }

    @Test(
        "a scheme other than Nostr, or no credentials, fails",
        arguments: ["Bearer ", "Basic ", "Nostrx ", "Nost ", "", "Nostr"])
    func notNostr(prefix: String) {
        let credentials = Self.header(Self.event()).dropFirst("Nostr ".count)
        #expect(failure(verify(prefix + credentials)) == .notNostrScheme)
        #expect(failure(verify("Nostr ")) == .notNostrScheme)
        #expect(failure(verify("Nostr")) == .notNostrScheme)
    }

    @Test("bad base64 fails", arguments: ["!", "-", " x", "=", "\n"])
    func badBase64(garbage: String) {
        var header = Self.header(Self.event(content: "xy"))
        header.insert(contentsOf: garbage, at: header.index(header.startIndex, offsetBy: 20))
        #expect(failure(verify(header)) == .invalidBase64)
    }

    @Test("base64 with non-zero trailing bits fails")
    func trailingBits() throws {
        let header = Self.paddedHeader()
        let unpadded = header.filter { $0 != "=" }
        // With 1 or 2 leftover bytes the last character carries unused low bits; set one of them.
        let last = try #require(unpadded.last)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        let index = try #require(alphabet.firstIndex(of: last))
        let tampered = String(unpadded.dropLast()) + String(alphabet[index | 1])
        #expect(failure(verify(tampered)) == .invalidBase64)
    }

    @Test("a header value over 4096 bytes fails; exactly 4096 bytes is accepted")
    func headerLength() throws {
        let header = Self.header(Self.event())
        let padding = NIP98Verifier.maximumHeaderLength - header.utf8.count
        try #require(padding > 0)
        let exact = "Nostr" + String(repeating: " ", count: padding + 1) + header.dropFirst("Nostr ".count)
        #expect(exact.utf8.count == 4096)
        #expect(failure(verify(exact)) == nil)
        let over = "Nostr" + String(repeating: " ", count: padding + 2) + header.dropFirst("Nostr ".count)
        #expect(failure(verify(over)) == .headerTooLong)
        let longContent = Self.header(Self.event(content: String(repeating: "a", count: 3000)))
        #expect(failure(verify(longContent)) == .headerTooLong)
    }

    // MARK: Event

    @Test("a kind other than 27235 fails", arguments: [1 as Int64, 27234, 27236, 0])
    func wrongKind(kind: Int64) {
        #expect(failure(verify(Self.header(Self.event(kind: kind)))) == .wrongKind)
    }

    @Test("an id that is not the hash of the event fails, even with a valid signature of that id")
    func badID() {
        var event = Self.event()
        event.id[0] ^= 0x01
        event.signature = Self.key.sign(message32: event.id, auxiliaryRandomness: Self.auxiliaryRandomness)
        #expect(event.hasValidSignature)
        #expect(failure(verify(Self.header(event))) == .idMismatch)
    }

    @Test("a bad signature fails", arguments: [0, 31, 32, 63])
    func badSignature(byte: Int) {
        var event = Self.event()
        event.signature[byte] ^= 0x04
        #expect(failure(verify(Self.header(event))) == .invalidSignature)
    }

    @Test("a signature by another key fails")
    func otherSigner() throws {
        let other = try #require(SchnorrSigningKey(secretKey: SHA256.hash(Array("other".utf8))))
        var event = Self.event()
        event.signature = other.sign(message32: event.id, auxiliaryRandomness: Self.auxiliaryRandomness)
        #expect(failure(verify(Self.header(event))) == .invalidSignature)
    }

    @Test("a duplicate JSON member fails")
    func duplicateMember() {
        let header = Self.header(editing: Self.event()) {
            $0.replacingOccurrences(of: #"{"id""#, with: #"{"kind":27235,"id""#)
        }
        #expect(failure(verify(header)) == .malformedEvent)
    }

    @Test("an unknown JSON member fails")
    func unknownMember() {
        let header = Self.header(editing: Self.event()) {
            $0.replacingOccurrences(of: #"{"id""#, with: #"{"extra":1,"id""#)
        }
        #expect(failure(verify(header)) == .malformedEvent)
    }

    @Test("text that is not the event JSON fails", arguments: [" ", "{}", "[]", "null", "{\"id\":"])
    func notEventJSON(text: String) {
        #expect(failure(verify("Nostr " + Base64.encode(Array(text.utf8)))) == .malformedEvent)
    }

    @Test("a pubkey that is not a curve point fails")
    func invalidPublicKey() {
        let event = Self.event()
        let header = Self.header(editing: event) {
            $0.replacingOccurrences(
                of: event.publicKey.hex, with: "eefdea4cdb677750a420fee807eacf21eb9898ae79b9768766e4faa04a2d4a34")
        }
        #expect(failure(verify(header)) == .invalidPublicKey)
    }

    // MARK: Tags

    @Test(
        "u naming another scheme, host, port, path or query fails",
        arguments: [
            "http://push.example.com/v1/deliveries/apns", "https://push2.example.com/v1/deliveries/apns",
            "https://push.example.com:443/v1/deliveries/apns", "https://push.example.com/v1/deliveries/apns/",
            "https://push.example.com/v1/deliveries/apns?x=1", "https://push.example.com/v1/deliveries/APNS",
            "https://PUSH.example.com/v1/deliveries/apns", "https://push.example.com/v1/deliveries/apns?",
            "https://push.example.com/v1/deliveries/apns#f",
        ])
    func urlMismatch(signedURL: String) {
        #expect(failure(verify(Self.header(Self.event(url: signedURL)))) == .urlMismatch)
    }

    @Test("a received URL with another port or query than the signed one fails")
    func receivedURLMismatch() {
        let header = Self.header(Self.event())
        for (host, target) in [
            ("push.example.com:8443", "/v1/deliveries/apns"), ("push.example.com", "/v1/deliveries/apns?x=1"),
        ] {
            let url = ReceivedRequestURL(host: host, forwardedProto: "https", requestTarget: target)
            #expect(failure(verify(header, url: url)) == .urlMismatch)
        }
    }

    @Test("u compares bytes, not canonically equivalent Unicode")
    func urlCanonicalEquivalence() throws {
        // U+037E GREEK QUESTION MARK is canonically equivalent to ';' so Swift's String == calls them equal.
        let received = try #require(
            ReceivedRequestURL(host: "push.example.com", forwardedProto: "https", requestTarget: "/v1/a;b"))
        #expect("https://push.example.com/v1/a\u{37E}b" == received.string)
        let header = Self.header(Self.event(url: "https://push.example.com/v1/a\u{37E}b"))
        #expect(failure(verify(header, url: received)) == .urlMismatch)
    }

    @Test("a method tag other than POST fails", arguments: ["GET", "post", "PUT", "POST ", ""])
    func methodTag(method: String) {
        #expect(failure(verify(Self.header(Self.event(method: method)))) == .methodMismatch)
    }

    @Test("a request whose own method is not POST fails")
    func requestMethod() {
        #expect(failure(verify(Self.header(Self.event()), method: "PUT")) == .methodMismatch)
    }

    @Test("a payload hash of another body fails")
    func payloadOfAnotherBody() {
        let header = Self.header(Self.event(body: Self.body + [0x20]))
        #expect(failure(verify(header)) == .payloadMismatch)
        #expect(failure(verify(Self.header(Self.event()), body: Array(Self.body.dropLast()))) == .payloadMismatch)
    }

    @Test("an uppercase payload hash fails")
    func uppercasePayload() {
        let payload = Hex.encode(SHA256.hash(Self.body)).uppercased()
        let tags = [["u", Self.signedURL], ["method", "POST"], ["payload", payload]]
        #expect(failure(verify(Self.header(Self.event(tags: tags)))) == .payloadMismatch)
    }

    @Test("a repeated u, method or payload tag fails, even with the same value", arguments: 0..<3)
    func repeatedTag(index: Int) {
        var tags = Self.event().tags
        tags.append(tags[index])
        #expect(failure(verify(Self.header(Self.event(tags: tags)))) == .repeatedTag)
    }

    @Test("a missing u, method or payload tag fails", arguments: 0..<3)
    func missingTag(index: Int) {
        var tags = Self.event().tags
        tags.remove(at: index)
        #expect(failure(verify(Self.header(Self.event(tags: tags)))) == .missingTag)
    }

    @Test("a u, method or payload tag without a value fails", arguments: 0..<3)
    func valuelessTag(index: Int) {
        var tags = Self.event().tags
        tags[index] = [tags[index][0]]
        #expect(failure(verify(Self.header(Self.event(tags: tags)))) == .malformedTag)
    }

    // MARK: Time

    @Test("created_at 61 s old fails")
    func tooOld() {
        #expect(failure(verify(Self.header(Self.event(createdAt: Self.now - 61)))) == .tooOld)
    }

    @Test("created_at 31 s ahead fails")
    func tooFarAhead() {
        #expect(failure(verify(Self.header(Self.event(createdAt: Self.now + 31)))) == .tooFarInFuture)
    }

    @Test("extreme created_at values fail without overflow")
    func extremeTimes() {
        #expect(failure(verify(Self.header(Self.event(createdAt: Int64.min)))) == .tooOld)
        #expect(failure(verify(Self.header(Self.event(createdAt: Int64.max)))) == .tooFarInFuture)
        #expect(failure(verify(Self.header(Self.event(createdAt: Int64.max)), now: -10)) == .tooFarInFuture)
    }

    // MARK: Proxies and origins

    @Test("behind a proxy, X-Forwarded-Proto https plus Host reproduce the signed https URL")
    func forwardedHTTPS() {
        let url = ReceivedRequestURL(
            host: "push.example.com", forwardedProto: "https", requestTarget: "/v1/deliveries/apns")
        #expect(failure(verify(Self.header(Self.event()), url: url)) == nil)
    }

    @Test("without X-Forwarded-Proto the received URL is http and an https u fails")
    func missingForwardedProto() {
        let url = ReceivedRequestURL(
            host: "push.example.com", forwardedProto: nil, requestTarget: "/v1/deliveries/apns")
        #expect(failure(verify(Self.header(Self.event()), url: url)) == .urlMismatch)
    }

    @Test("X-Forwarded-Proto with another value leaves the URL undefined and fails")
    func otherForwardedProto() {
        let url = ReceivedRequestURL(
            host: "push.example.com", forwardedProto: "ftp", requestTarget: "/v1/deliveries/apns")
        #expect(url == nil)
        #expect(failure(verify(Self.header(Self.event()), url: url)) == .requestURLUndefined)
    }

    @Test("with PUBLIC_ORIGINS set, a listed origin is accepted")
    func listedOrigin() {
        let verifier = NIP98Verifier(
            allowedPublicOrigins: ["https://other.example", "https://push.example.com"])
        #expect(failure(verify(Self.header(Self.event()), verifier: verifier)) == nil)
    }

    @Test("with PUBLIC_ORIGINS set, an unlisted origin fails even when u matches the received URL")
    func unlistedOrigin() {
        for origins in [["https://other.example"], ["http://push.example.com"], ["https://push.example.com:443"], []] {
            let verifier = NIP98Verifier(allowedPublicOrigins: origins)
            #expect(failure(verify(Self.header(Self.event()), verifier: verifier)) == .originNotAllowed)
        }
    }
}

import PushCrypto
import PushNostr
import PushTestSupport
import Testing

@testable import PushMarmot

enum MarmotFixture {
    static let server = SchnorrSigningKey(secretKey: SHA256.hash(Array("marmot server".utf8)))!
    static let serverSecretHex = Hex.encode(SHA256.hash(Array("marmot server".utf8)))
    static let apnsToken = SHA256.hash(Array("an iPhone".utf8))
    static let fcmToken = Array("cXk2:APA91bH-example_registration.token".utf8)

    static func author() -> SchnorrSigningKey { SchnorrSigningKey(secretKey: try! SecureRandom.bytes(32))! }

    static func apnsChunk() -> [UInt8] {
        MarmotTestEncoder.randomChunk(platform: .apns, token: apnsToken, server: server.publicKey)
    }

    static func fcmChunk() -> [UInt8] {
        MarmotTestEncoder.randomChunk(platform: .fcm, token: fcmToken, server: server.publicKey)
    }

    /// Decodes the gift wrap of a rumor carrying `content` with `tags`, as the server would.
    static func decode(
        content: String, kind: Int64 = 446, tags: [[String]] = [["v", "marmot-push-v1"]]
    ) -> Result<
        MarmotTrigger, MarmotError
    > {
        let author = author()
        let rumor = MarmotTestEncoder.rumor(content: content, author: author, kind: kind, tags: tags)
        return MarmotTriggerDecoder.decode(
            MarmotTestEncoder.giftWrap(rumor, author: author, server: server.publicKey), serverKey: server,
            now: MarmotIngressHarness.now)
    }
}

@Suite("Marmot Push v1 tokens", .testBodyThreads)
struct MarmotPushTokenTests {
    @Test("the token key of shared_x 0x00..0x1f is Transponder's known answer")
    func transponderKey() {
        #expect(
            Hex.encode(MarmotPushToken.key(sharedX: Array(0...31)))
                == "954b9d7be996c0e74517fe49e41e1278f44395d2855a52f50b5e322976dd168d")
    }

    @Test("an APNs chunk opens to its raw token, sent as lowercase hex; an FCM chunk to its ASCII token")
    func openTokens() throws {
        let apns = try MarmotPushToken.open(MarmotFixture.apnsChunk()[...], serverKey: MarmotFixture.server).get()
        #expect(apns == MarmotDeviceToken(platform: .apns, bytes: MarmotFixture.apnsToken))
        #expect(apns.endpoint == Hex.encode(MarmotFixture.apnsToken))
        let fcm = try MarmotPushToken.open(MarmotFixture.fcmChunk()[...], serverKey: MarmotFixture.server).get()
        #expect(fcm.platform == .fcm)
        #expect(fcm.endpoint == "cXk2:APA91bH-example_registration.token")
    }

    @Test("a token never shows in its description")
    func redacted() throws {
        let token = try MarmotPushToken.open(MarmotFixture.apnsChunk()[...], serverKey: MarmotFixture.server).get()
        #expect(!String(describing: token).contains(Hex.encode(MarmotFixture.apnsToken)))
        #expect(String(describing: token) == "MarmotDeviceToken(apns, <redacted>)")
    }

    @Test("tokens of 1 and 1021 bytes open; length fields 0 and 1022 are skipped as length")
    func lengthBounds() {
        let server = MarmotFixture.server.publicKey
        func open(_ token: [UInt8], length: Int? = nil) -> Result<MarmotDeviceToken, MarmotError> {
            let chunk = MarmotTestEncoder.chunk(
                platform: 0x01, token: token, tokenLength: length, server: server,
                ephemeralSecret: SHA256.hash(token), nonce: [UInt8](repeating: 9, count: 12))
            return MarmotPushToken.open(chunk[...], serverKey: MarmotFixture.server)
        }
        #expect((try? open([0xab]).get())?.bytes == [0xab])
        #expect((try? open([UInt8](repeating: 0xcd, count: 1021)).get())?.bytes.count == 1021)
        #expect(open([0xab], length: 0) == .failure(MarmotError(.length)))
        #expect(open([UInt8](repeating: 0xcd, count: 1021), length: 1022) == .failure(MarmotError(.length)))
    }

    @Test("an unknown platform byte and an FCM token outside §1's characters are skipped as platform")
    func platformSkips() {
        let server = MarmotFixture.server.publicKey
        let unknown = MarmotTestEncoder.chunk(
            platform: 0x03, token: [1, 2, 3], server: server, ephemeralSecret: SHA256.hash([3]),
            nonce: [UInt8](repeating: 1, count: 12))
        #expect(MarmotPushToken.open(unknown[...], serverKey: MarmotFixture.server) == .failure(MarmotError(.platform)))
        let badFCM = MarmotTestEncoder.chunk(
            platform: 0x02, token: Array("token with spaces".utf8), server: server, ephemeralSecret: SHA256.hash([4]),
            nonce: [UInt8](repeating: 1, count: 12))
        #expect(MarmotPushToken.open(badFCM[...], serverKey: MarmotFixture.server) == .failure(MarmotError(.platform)))
    }

    @Test("an ephemeral key that is not a curve x is skipped as ecdh; another server's chunk or random bytes as aead")
    func cryptoSkips() {
        var notOnCurve = MarmotFixture.apnsChunk()
        notOnCurve.replaceSubrange(0..<32, with: [UInt8](repeating: 0xff, count: 32))
        #expect(MarmotPushToken.open(notOnCurve[...], serverKey: MarmotFixture.server) == .failure(MarmotError(.ecdh)))
        let other = SchnorrSigningKey(secretKey: SHA256.hash(Array("another server".utf8)))!
        let forOther = MarmotTestEncoder.randomChunk(platform: .apns, token: [1], server: other.publicKey)
        #expect(MarmotPushToken.open(forOther[...], serverKey: MarmotFixture.server) == .failure(MarmotError(.aead)))
        var padding = MarmotTestEncoder.paddingChunk()
        padding.replaceSubrange(0..<32, with: MarmotFixture.author().publicKey.bytes)
        #expect(MarmotPushToken.open(padding[...], serverKey: MarmotFixture.server) == .failure(MarmotError(.aead)))
    }
}

@Suite("Marmot Push v1 triggers (docs/protocol.md §13 steps 1–3 and 5)", .testBodyThreads)
struct MarmotTriggerTests {
    @Test("APNs and FCM tokens among random padding chunks: dispatched, tokens in order, padding skipped as aead")
    func mixedTrigger() throws {
        let chunks = [
            MarmotTestEncoder.paddingChunk(), MarmotFixture.apnsChunk(), MarmotTestEncoder.paddingChunk(),
            MarmotFixture.fcmChunk(),
        ]
        let content = Base64.encode(chunks.flatMap { $0 })
        let trigger = try MarmotFixture.decode(content: content).get()
        #expect(trigger.chunkCount == 4)
        #expect(trigger.digest == SHA256.hash(chunks.flatMap { $0 }))
        let opened = trigger.openChunks(serverKey: MarmotFixture.server)
        // A random key is a curve x about half the time: padding fails at the ECDH or at the AEAD.
        #expect([.failure(MarmotError(.ecdh)), .failure(MarmotError(.aead))].contains(opened[0]))
        #expect(opened[1] == .success(MarmotDeviceToken(platform: .apns, bytes: MarmotFixture.apnsToken)))
        #expect([.failure(MarmotError(.ecdh)), .failure(MarmotError(.aead))].contains(opened[2]))
        #expect(opened[3] == .success(MarmotDeviceToken(platform: .fcm, bytes: MarmotFixture.fcmToken)))
    }

    @Test("a corrupted chunk among good ones is skipped as aead and the others still open")
    func corruptedChunk() throws {
        var corrupted = MarmotFixture.apnsChunk()
        corrupted[500] ^= 0x01
        let chunks = [MarmotFixture.apnsChunk(), corrupted, MarmotFixture.fcmChunk()]
        let trigger = try MarmotFixture.decode(content: Base64.encode(chunks.flatMap { $0 })).get()
        let opened = trigger.openChunks(serverKey: MarmotFixture.server)
        #expect(opened.map { (try? $0.get())?.platform } == [.apns, nil, .fcm])
        #expect(opened[1] == .failure(MarmotError(.aead)))
    }

    @Test("the same content rewrapped by other keys has the same digest")
    func digestIgnoresWrapping() throws {
        let content = Base64.encode(MarmotFixture.apnsChunk())
        let first = try MarmotFixture.decode(content: content).get()
        let second = try MarmotFixture.decode(content: content).get()
        #expect(first.digest == second.digest)
    }

    @Test(
        "the rumor's tags must be exactly [[v, marmot-push-v1]]",
        arguments: [
            [], [["v", "mip05-v1"]], [["v", "marmot-push-v2"]], [["v", "marmot-push-v1"], ["p", "00"]],
            [["v", "marmot-push-v1", "extra"]], [["V", "marmot-push-v1"]], [["v"]],
            [["v", "marmot-push-v1"], ["v", "marmot-push-v1"]],
        ] as [[[String]]])
    func wrongVersion(tags: [[String]]) {
        let content = Base64.encode(MarmotFixture.apnsChunk())
        #expect(MarmotFixture.decode(content: content, tags: tags) == .failure(MarmotError(.wrongVersion)))
    }

    @Test("empty content, bad base64, unpadded base64 and a length that is not a multiple of 1084 are bad_content")
    func badContent() {
        let chunk = MarmotFixture.apnsChunk()
        let padded = Base64.encode(chunk)
        for content in [
            "", "not base64!", String(padded.dropLast(2)), padded + "\n", " " + padded,
            Base64.encode(chunk + [0]), Base64.encode(chunk.dropLast()),
            Base64.encode([UInt8](repeating: 1, count: 2168 - 1)),
        ] {
            #expect(MarmotFixture.decode(content: content) == .failure(MarmotError(.badContent)))
        }
    }

    @Test("33 chunks, or more than 32 chunks' bytes, are too_many_chunks; 32 chunks are not")
    func chunkLimit() throws {
        let chunk = MarmotFixture.apnsChunk()
        let thirtyThree = Base64.encode([[UInt8]](repeating: chunk, count: 33).flatMap { $0 })
        #expect(MarmotFixture.decode(content: thirtyThree) == .failure(MarmotError(.tooManyChunks)))
        let overLimit = Base64.encode([[UInt8]](repeating: chunk, count: 32).flatMap { $0 } + [0])
        #expect(MarmotFixture.decode(content: overLimit) == .failure(MarmotError(.tooManyChunks)))
    }

    @Test("a 32-chunk trigger's seal needs NIP-44's 6-byte extended length and still decodes to 32 tokens")
    func thirtyTwoChunks() throws {
        let chunks = (0..<32).map { $0 % 2 == 0 ? MarmotFixture.apnsChunk() : MarmotFixture.fcmChunk() }
        let author = MarmotFixture.author()
        let rumor = MarmotTestEncoder.rumor(chunks: chunks, author: author)
        let wrap = MarmotTestEncoder.giftWrap(rumor, author: author, server: MarmotFixture.server.publicKey)
        // The wrap's plaintext (the seal's JSON) is over 65,535 bytes: its length prefix is 00 00 ‖ u32.
        let wrapKey = try #require(
            NIP44.conversationKey(secretKey: MarmotFixture.server, publicKey: wrap.publicKey))
        let sealJSON = try NIP44.decrypt(wrap.content, conversationKey: wrapKey)
        #expect(sealJSON.count >= NIP44.extendedLengthThreshold)
        let trigger = try MarmotTriggerDecoder.decode(
            wrap, serverKey: MarmotFixture.server, now: MarmotIngressHarness.now
        ).get()
        #expect(trigger.chunkCount == 32)
        let opened = trigger.openChunks(serverKey: MarmotFixture.server)
        #expect(opened.allSatisfy { (try? $0.get()) != nil })
    }

    @Test("a seal whose pubkey differs from the rumor's is bad_rumor, as is a rumor of another kind")
    func badRumor() throws {
        let author = MarmotFixture.author()
        let someoneElse = MarmotFixture.author()
        let rumor = MarmotTestEncoder.rumor(chunks: [MarmotFixture.apnsChunk()], author: someoneElse)
        let wrap = try NIP59.wrap(
            rumor, author: author, recipient: MarmotFixture.server.publicKey, wrapKey: MarmotFixture.author(),
            sealCreatedAt: 1, wrapCreatedAt: 2, randomness: .random())
        #expect(
            MarmotTriggerDecoder.decode(wrap, serverKey: MarmotFixture.server, now: 2)
                == .failure(MarmotError(.badRumor)))
        let content = Base64.encode(MarmotFixture.apnsChunk())
        #expect(MarmotFixture.decode(content: content, kind: 14) == .failure(MarmotError(.badRumor)))
    }

    @Test("a gift wrap for another server is not_for_this_key; malformed event JSON is bad_event")
    func badEvent() {
        let author = MarmotFixture.author()
        let other = SchnorrSigningKey(secretKey: SHA256.hash(Array("another server".utf8)))!
        let rumor = MarmotTestEncoder.rumor(chunks: [MarmotFixture.apnsChunk()], author: author)
        let wrap = MarmotTestEncoder.giftWrap(rumor, author: author, server: other.publicKey)
        #expect(
            MarmotTriggerDecoder.decode(wrap, serverKey: MarmotFixture.server, now: MarmotIngressHarness.now)
                == .failure(MarmotError(.notForThisKey)))
        #expect(MarmotTriggerDecoder.giftWrap(json: Array(#"{"kind":1059}"#.utf8)) == .failure(MarmotError(.badEvent)))
        #expect((try? MarmotTriggerDecoder.giftWrap(json: wrap.json).get()) == wrap)
    }

    @Test("every NIP-59 failure has its trigger class, and the labels are the §12 set plus rate_limited and duplicate")
    func classes() {
        #expect(
            MarmotTriggerResult.allCases.map(\.rawValue) == [
                "dispatched", "bad_event", "not_for_this_key", "stale", "unwrap_failed", "bad_seal", "bad_rumor",
                "wrong_version", "bad_content", "too_many_chunks", "rate_limited", "duplicate",
            ])
        let mapped = Dictionary(grouping: NostrError.giftWrapCodes, by: { MarmotError(NostrError($0)).code })
        #expect(mapped[.badEvent] == [.wrapKind, .wrapID, .wrapSignature])
        #expect(mapped[.notForThisKey] == [.wrapRecipient])
        #expect(mapped[.unwrapFailed] == [.wrapDecryption])
        #expect(mapped[.badSeal] == [.sealMalformed, .sealKind, .sealTags, .sealID, .sealSignature, .sealDecryption])
        #expect(mapped[.badRumor] == [.rumorMalformed, .rumorAuthor, .rumorID])
        let refusals: [MarmotError.Code] = [
            .badEvent, .notForThisKey, .stale, .unwrapFailed, .badSeal, .badRumor, .wrongVersion, .badContent,
            .tooManyChunks,
        ]
        #expect(refusals.allSatisfy { MarmotTriggerResult(MarmotError($0)).rawValue == $0.name })
        #expect(MarmotError.chunkSkipCodes.map(\.name) == ["ecdh", "aead", "platform", "length"])
    }
}

import APNsMock
import PushCrypto
import PushJSON
import PushTestSupport
import PushWebPush
import Testing
import WebPushMock

/// The mock's VAPID check and its script reader, without a socket.
@Suite("webpush-mock's VAPID verification and script reader", .testBodyThreads)
struct VAPIDVerificationTests {
    static let origin = "https://push.example.net:8443"
    static let now: Int64 = 1_800_000_000

    @Test("the header's parameters are read in either order, quoted or not, with any spacing; the scheme in any case")
    func parameterForms() throws {
        let signer = VAPIDSigner(key: try P256PrivateKey.generate(), subject: "mailto:ops@example.net")
        let token = try signer.token(audience: Self.origin, now: Self.now)
        for header in [
            "vapid t=\(token), k=\(signer.publicKey)", "vapid k=\(signer.publicKey),t=\(token)",
            "VAPID t=\"\(token)\",  k=\"\(signer.publicKey)\"",
        ] {
            let check = VAPIDVerification.check(authorization: header, origin: Self.origin, now: Self.now)
            #expect(check.verdict == .valid, "\(header)")
            #expect(check.audience == Self.origin && check.expiresAt == Self.now + 43_200)
        }
    }

    @Test("a repeated or unknown parameter, a k that is no P-256 point, and a JWT that is not ES256 are malformed")
    func malformedHeaders() throws {
        let signer = VAPIDSigner(key: try P256PrivateKey.generate(), subject: "mailto:ops@example.net")
        let token = try signer.token(audience: Self.origin, now: Self.now)
        let parts = token.split(separator: ".")
        let hs256 = Base64.encodeURLNoPadding(Array(#"{"typ":"JWT","alg":"HS256"}"#.utf8)) + ".\(parts[1]).\(parts[2])"
        for header in [
            "vapid t=\(token), t=\(token), k=\(signer.publicKey)", "vapid t=\(token), k=\(signer.publicKey), x=1",
            "vapid t=\(token), k=AAAA", "vapid t=\(token)", "vapid t=\(hs256), k=\(signer.publicKey)",
            "vapid t=\(parts[0]).\(parts[1]), k=\(signer.publicKey)",
        ] {
            #expect(
                VAPIDVerification.check(authorization: header, origin: Self.origin, now: Self.now).verdict
                    == .malformed, "\(header)")
        }
    }

    @Test("exp exactly 24 hours ahead is accepted, a second more is not; exp equal to now is expired")
    func expiryBounds() throws {
        let signer = VAPIDSigner(key: try P256PrivateKey.generate(), subject: "https://example.net/contact")
        let header = try signer.authorization(origin: Self.origin, now: Self.now)
        let expiry = Self.now + VAPIDSigner.lifetimeSeconds
        func verdict(at now: Int64) -> VAPIDVerification.Verdict {
            VAPIDVerification.check(authorization: header, origin: Self.origin, now: now).verdict
        }
        #expect(verdict(at: expiry - 86_400) == .valid)
        #expect(verdict(at: expiry - 86_401) == .expiresTooLate)
        #expect(verdict(at: expiry - 1) == .valid)
        #expect(verdict(at: expiry) == .expired)
    }

    @Test(
        "a script reads replies and a default; an unknown member, a status outside 100..599 or another action is refused"
    )
    func scripts() throws {
        let script = try WebPushMockScript.parse(
            try JSONReader.parse(
                Array(
                    #"{"replies":[{"status":429,"retry_after":30},{"status":301,"location":"https://x.example/"},{"action":"stall"}],"default":{"status":410,"retry_after":"Wed, 21 Oct 2026 07:28:00 GMT"}}"#
                        .utf8)))
        #expect(
            script
                == WebPushMockScript(
                    replies: [
                        WebPushMockReply(status: 429, retryAfter: "30"),
                        WebPushMockReply(status: 301, location: "https://x.example/"), WebPushMockReply(action: .stall),
                    ], defaultReply: WebPushMockReply(status: 410, retryAfter: "Wed, 21 Oct 2026 07:28:00 GMT")))
        for bad in [
            #"{"replies":[{"status":99}]}"#, #"{"replies":[{"action":"refuse"}]}"#, #"{"default":{"reason":"x"}}"#,
            #"{"sequence":[]}"#, #"{"replies":{}}"#, "[]",
        ] {
            #expect(throws: MockError.self, "\(bad)") {
                try WebPushMockScript.parse(try JSONReader.parse(Array(bad.utf8)))
            }
        }
    }
}

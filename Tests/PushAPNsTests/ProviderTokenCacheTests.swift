import PushCrypto
import PushTestSupport
import Synchronization
import Testing

@testable import PushAPNs

/// A deterministic stand-in for ES256: 64 bytes derived from the input, and a call counter.
final class FakeSigner: Sendable {
    let calls = Atomic<Int>(0)

    var sign: ProviderTokenCache.Signer {
        { [self] input in
            calls.add(1, ordering: .relaxed)
            return (0..<64).map { index in input[index % input.count] &+ UInt8(index) }
        }
    }
}

/// A settable Unix clock.
final class TestClock: Sendable {
    let seconds: Atomic<Int64>

    init(_ start: Int64) { seconds = Atomic(start) }

    var now: ProviderTokenCache.Clock { { [self] in seconds.load(ordering: .relaxed) } }

    func advance(_ delta: Int64) { seconds.add(delta, ordering: .relaxed) }
}

@Suite("Provider token (ES256 JWT) cache, docs/protocol.md §8", .testBodyThreads)
struct ProviderTokenCacheTests {
    @Test("header and claims are exactly the prescribed JSON, base64url without padding")
    func exactShape() throws {
        let signer = FakeSigner()
        let cache = ProviderTokenCache(
            teamID: "TEAM123456", keyID: "KEY1234567", signer: signer.sign, clock: { 1_700_000_000 })
        let token = try cache.token()
        let parts = token.jwt.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        #expect(!token.jwt.contains("=") && !token.jwt.contains("+") && !token.jwt.contains("/"))
        let header = try #require(Base64.decodeURLNoPadding(parts[0]))
        let claims = try #require(Base64.decodeURLNoPadding(parts[1]))
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"ES256","kid":"KEY1234567"}"#)
        #expect(String(decoding: claims, as: UTF8.self) == #"{"iss":"TEAM123456","iat":1700000000}"#)
        let expectedSignature = try signer.sign(Array("\(parts[0]).\(parts[1])".utf8))
        #expect(Base64.decodeURLNoPadding(parts[2]) == expectedSignature)
        #expect(token.issuedAt == 1_700_000_000)
    }

    @Test("the token is reused for 50 minutes and renewed after")
    func renewalAfterFiftyMinutes() throws {
        let signer = FakeSigner()
        let clock = TestClock(1_000_000)
        let cache = ProviderTokenCache(teamID: "T", keyID: "K", signer: signer.sign, clock: clock.now)
        let first = try cache.token()
        clock.advance(20 * 60)
        #expect(try cache.token() == first)
        clock.advance(30 * 60 - 1)
        #expect(try cache.token() == first)
        clock.advance(1)
        let second = try cache.token()
        #expect(second.issuedAt == 1_000_000 + 50 * 60)
        #expect(second != first)
        #expect(signer.calls.load(ordering: .relaxed) == 2)
    }

    @Test("never renewed within 20 minutes, even when the clock jumps backwards")
    func twentyMinuteFloor() throws {
        let signer = FakeSigner()
        let clock = TestClock(1_000_000)
        let cache = ProviderTokenCache(teamID: "T", keyID: "K", signer: signer.sign, clock: clock.now)
        let first = try cache.token()
        clock.advance(-3 * 3600)
        #expect(try cache.token() == first)
        #expect(signer.calls.load(ordering: .relaxed) == 1)
    }

    @Test("the forced renewal ignores the floor and yields a new iat, once for all who saw the rejection")
    func forcedRenewal() throws {
        let signer = FakeSigner()
        let cache = ProviderTokenCache(teamID: "T", keyID: "K", signer: signer.sign, clock: { 5_000 })
        let rejected = try cache.token()
        let renewed = try cache.renew(replacing: rejected)
        #expect(renewed.issuedAt > rejected.issuedAt)
        #expect(renewed.jwt != rejected.jwt)
        #expect(try cache.renew(replacing: rejected) == renewed)
        #expect(try cache.token() == renewed)
        #expect(signer.calls.load(ordering: .relaxed) == 2)
    }

    @Test("a failing signer or a signature of the wrong size is a credential error")
    func signerFailures() {
        struct Broken: Error {}
        let failing = ProviderTokenCache(teamID: "T", keyID: "K", signer: { _ in throw Broken() })
        #expect(throws: APNsError.self) { try failing.token() }
        #expect(tokenErrorCode(failing) == .signerFailed)
        let short = ProviderTokenCache(teamID: "T", keyID: "K", signer: { _ in [UInt8](repeating: 1, count: 72) })
        #expect(tokenErrorCode(short) == .signatureNotRaw)
    }

    private func tokenErrorCode(_ cache: ProviderTokenCache) -> APNsError.Code? {
        do {
            _ = try cache.token()
            return nil
        } catch {
            return error.code
        }
    }
}

import PushJSON
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import PushGateway

@Suite("The challenge route's 200 body (docs/protocol.md §4.1), written straight into bytes", .testBodyThreads)
struct ChallengeResponseBodyTests {
    @Test("the challenge response body is byte for byte what JSONWriter writes for the same members")
    func responseBodyMatchesJSONWriter() throws {
        var generator = SystemRandomNumberGenerator()
        let edgeExpiries: [Int64] = [0, 9, 10, 1_764_421_534, Int64.max, -1, Int64.min]
        for round in 0..<200 {
            let idBytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let challenge = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let expiresAt = round < edgeExpiries.count ? edgeExpiries[round] : Int64.random(in: 0...(1 << 40))
            let issued = IssuedChallenge(
                challengeID: try #require(CanonicalUUID(bytes: idBytes)), challenge: challenge, expiresAt: expiresAt)
            var writer = JSONWriter()
            writer.beginObject()
            writer.member("challenge_id", issued.challengeID.text)
            writer.member("challenge", issued.challengeText)
            writer.member("expires_at", issued.expiresAt)
            writer.endObject()
            #expect(issued.responseBody == writer.bytes)
        }
    }
}

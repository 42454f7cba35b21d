import PushCrypto
import PushMarmot
import PushNostr

/// A kind 446 rumor's content through docs/protocol.md §13 step 3 and, when it passes, step 5 with a
/// fixed server key: accepted content is 1...32 whole chunks whose digest is that of the decoded
/// bytes, and every opened token has a known platform and 1...1021 bytes.
enum MarmotContentTarget {
    static let serverKey = SchnorrSigningKey(secretKey: [UInt8](repeating: 0x22, count: 32))!
    static let author = SchnorrSigningKey(secretKey: [UInt8](repeating: 0x33, count: 32))!

    static func prepare() { _ = (serverKey, author) }

    static func run(_ input: [UInt8]) {
        let rumor = NostrRumor(
            publicKey: author.publicKey, createdAt: 0, kind: 446, tags: [["v", "marmot-push-v1"]],
            content: String(decoding: input, as: UTF8.self))
        guard case .success(let trigger) = MarmotTriggerDecoder.decode(rumor: rumor) else { return }
        FuzzCheck.require((1...32).contains(trigger.chunkCount), "chunk count outside 1...32")
        FuzzCheck.require(trigger.tokenData.count == trigger.chunkCount * 1084, "content is not whole chunks")
        FuzzCheck.require(Base64.decode(rumor.content) == trigger.tokenData, "decoded content differs")
        for result in trigger.openChunks(serverKey: serverKey) {
            guard case .success(let token) = result else { continue }
            FuzzCheck.require((1...1021).contains(token.bytes.count), "token length outside 1...1021")
        }
    }
}

import PushCrypto
import PushJSON
import PushNostr

/// A trigger that passed docs/protocol.md §13 steps 1–3: its encrypted tokens, not yet opened.
public struct MarmotTrigger: Sendable, Equatable {
    /// The decoded rumor content: 1...32 chunks of 1084 bytes.
    public let tokenData: [UInt8]

    public var chunkCount: Int { tokenData.count / MarmotPushToken.byteCount }

    /// The 1084-byte chunks in order.
    public var chunks: [ArraySlice<UInt8>] {
        stride(from: 0, to: tokenData.count, by: MarmotPushToken.byteCount).map {
            tokenData[$0..<($0 + MarmotPushToken.byteCount)]
        }
    }

    /// Step 4's replay key: SHA-256 of the decoded content, the same however the trigger was wrapped.
    public var digest: [UInt8] { SHA256.hash(tokenData) }

    /// Step 5 for every chunk, in order; each chunk succeeds or fails on its own.
    public func openChunks(serverKey: SchnorrSigningKey) -> [Result<MarmotDeviceToken, MarmotError>] {
        chunks.map { MarmotPushToken.open($0, serverKey: serverKey) }
    }
}

/// Pure decoding of docs/protocol.md §13 steps 1–3 (no rate limit, no replay table: the ingress
/// adds those between the steps).
public enum MarmotTriggerDecoder {
    public static let rumorKind: Int64 = 446
    public static let versionTags = [["v", "marmot-push-v1"]]
    public static let maximumChunkCount = 32

    /// The strict gift-wrap event of a relay's `EVENT` message; a malformed one is `bad_event`.
    public static func giftWrap(json: [UInt8]) -> Result<NostrEvent, MarmotError> {
        guard let event = try? NostrEvent(json: json) else { return .failure(MarmotError(.badEvent)) }
        return .success(event)
    }

    /// Steps 1–3 without the rate limit: wrap, seal and rumor checks, then the content rules.
    public static func decode(
        _ wrap: NostrEvent, serverKey: SchnorrSigningKey
    ) -> Result<
        MarmotTrigger, MarmotError
    > {
        switch NIP59.unwrap(wrap, recipientKey: serverKey) {
        case .failure(let failure): .failure(MarmotError(failure))
        case .success(let gift): decode(rumor: gift.rumor)
        }
    }

    /// Step 3: kind 446, exactly the version tag, then the content: padded standard base64 of 1...32
    /// whole chunks. Oversize is checked before the multiple, so 33 whole chunks and 34,700 bytes are
    /// both `too_many_chunks`.
    public static func decode(rumor: NostrRumor) -> Result<MarmotTrigger, MarmotError> {
        guard rumor.kind == rumorKind else { return .failure(MarmotError(.badRumor)) }
        guard rumor.tags.count == 1, rumor.tags[0].count == 2, UTF8Equality.equal(rumor.tags[0][0], "v"),
            UTF8Equality.equal(rumor.tags[0][1], "marmot-push-v1")
        else { return .failure(MarmotError(.wrongVersion)) }
        let content = rumor.content.utf8
        guard !content.isEmpty, content.count % 4 == 0, let tokenData = Base64.decode(rumor.content),
            !tokenData.isEmpty
        else { return .failure(MarmotError(.badContent)) }
        guard tokenData.count <= maximumChunkCount * MarmotPushToken.byteCount else {
            return .failure(MarmotError(.tooManyChunks))
        }
        guard tokenData.count % MarmotPushToken.byteCount == 0 else { return .failure(MarmotError(.badContent)) }
        return .success(MarmotTrigger(tokenData: tokenData))
    }
}

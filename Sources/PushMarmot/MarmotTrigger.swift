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

/// Pure decoding of docs/protocol.md §13 steps 1–3 (no seen set, no rate limit, no replay table:
/// the ingress adds those between the steps).
public enum MarmotTriggerDecoder {
    public static let rumorKind: Int64 = 446
    public static let versionTags = [["v", "marmot-push-v1"]]
    public static let maximumChunkCount = 32
    /// Step 1's window: NIP-59 randomizes a wrap's `created_at` up to two days back, so an older
    /// wrap is a replay of a captured one; 600 s either side absorb clock skew.
    public static let maximumAgeSeconds: Int64 = 172_800 + 600
    public static let maximumFutureSeconds: Int64 = 600

    /// The strict gift-wrap event of a relay's `EVENT` message; a malformed one is `bad_event`.
    public static func giftWrap(json: [UInt8]) -> Result<NostrEvent, MarmotError> {
        guard let event = try? NostrEvent(json: json) else { return .failure(MarmotError(.badEvent)) }
        return .success(event)
    }

    /// Step 1's cheap checks, on the wrap as received and before any signature check: kind 1059
    /// (else `bad_event`), a `p` tag naming `server` (else `not_for_this_key`), a `created_at`
    /// inside the window around `now` (else `stale`). Nil when it passes them.
    public static func cheapChecks(_ wrap: NostrEvent, server: XOnlyPublicKey, now: Int64) -> MarmotError? {
        guard wrap.kind == NIP59.giftWrapKind else { return MarmotError(.badEvent) }
        let serverHex = server.hex
        guard
            wrap.tags.contains(where: {
                $0.count >= 2 && UTF8Equality.equal($0[0], "p") && UTF8Equality.equal($0[1], serverHex)
            })
        else { return MarmotError(.notForThisKey) }
        // Both times may be any Int64 (`created_at` from the wire, `now` from `--at`): an age that
        // overflows is outside the window too.
        let (age, overflowed) = now.subtractingReportingOverflow(wrap.createdAt)
        guard !overflowed, (-maximumFutureSeconds...maximumAgeSeconds).contains(age) else {
            return MarmotError(.stale)
        }
        return nil
    }

    /// Step 1's last check: the NIP-01 id and the BIP-340 signature (else `bad_event`).
    public static func hasValidSignature(_ wrap: NostrEvent) -> Bool {
        wrap.computedID == wrap.id && wrap.hasValidSignature
    }

    /// Steps 1–3 without the seen set and the rate limit, at Unix time `now`: the cheap checks,
    /// the signature, the seal and rumor, then the content rules.
    public static func decode(
        _ wrap: NostrEvent, serverKey: SchnorrSigningKey, now: Int64
    ) -> Result<
        MarmotTrigger, MarmotError
    > {
        if let refusal = cheapChecks(wrap, server: serverKey.publicKey, now: now) { return .failure(refusal) }
        guard hasValidSignature(wrap) else { return .failure(MarmotError(.badEvent)) }
        return open(verifiedWrap: wrap, serverKey: serverKey)
    }

    /// Steps 2–3 for a wrap that passed step 1: two ECDH and two NIP-44 opens, then the rumor.
    public static func open(
        verifiedWrap wrap: NostrEvent, serverKey: SchnorrSigningKey
    ) -> Result<
        MarmotTrigger, MarmotError
    > {
        do throws(NostrError) {
            return decode(rumor: try NIP59.open(verifiedWrap: wrap, recipientKey: serverKey).rumor)
        } catch {
            return .failure(MarmotError(error))
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

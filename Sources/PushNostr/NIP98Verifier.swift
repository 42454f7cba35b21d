import PushCrypto
import PushJSON

/// What a valid NIP-98 header proves: this relay key signed this event for this request.
public struct NIP98Authorization: Sendable, Equatable {
    /// The relay identity (the event's `pubkey`).
    public let relayPublicKey: XOnlyPublicKey
    /// The event id, burned at admission so the event is never admitted twice (docs/protocol.md §4.7).
    public let eventID: [UInt8]
    public let createdAt: Int64

    public init(relayPublicKey: XOnlyPublicKey, eventID: [UInt8], createdAt: Int64) {
        self.relayPublicKey = relayPublicKey
        self.eventID = eventID
        self.createdAt = createdAt
    }
}

/// NIP-98 HTTP authentication of relay deliveries (docs/protocol.md §6), as a pure function of the request.
public struct NIP98Verifier: Sendable {
    /// NIP-98 event kind.
    public static let eventKind: Int64 = 27235
    /// docs/protocol.md §6: header value at most 4096 bytes.
    public static let maximumHeaderLength = 4096
    /// docs/protocol.md §6: `created_at` at most 60 s in the past …
    public static let maximumAge: Int64 = 60
    /// … and at most 30 s in the future.
    public static let maximumLead: Int64 = 30
    /// The only method the delivery route accepts.
    public static let method = "POST"

    private let allowedPublicOrigins: [String]?

    /// - Parameter allowedPublicOrigins: `PUSH_GATEWAY_PUBLIC_ORIGINS` as `scheme://authority` strings, or nil
    ///   when unset (then any origin the request carries is accepted).
    public init(allowedPublicOrigins: [String]? = nil) {
        self.allowedPublicOrigins = allowedPublicOrigins
    }

    /// Verifies an `Authorization` header value against the received request.
    ///
    /// - Parameters:
    ///   - authorization: the header value, nil when the header is absent.
    ///   - requestURL: the received request URL (docs/protocol.md §2), nil when undefined.
    ///   - method: the request's method.
    ///   - body: the exact received body bytes.
    ///   - now: the current Unix time in seconds.
    public func verify(
        authorization: String?, requestURL: ReceivedRequestURL?, method: String, body: [UInt8], now: Int64
    ) -> Result<NIP98Authorization, NostrError> {
        Result { () throws(NostrError) in
            try verifyThrowing(
                authorization: authorization, requestURL: requestURL, method: method, body: body, now: now)
        }
    }

    // Cheap checks run first; the id hash and the signature, the expensive ones, run last.
    private func verifyThrowing(
        authorization: String?, requestURL: ReceivedRequestURL?, method: String, body: [UInt8], now: Int64
    ) throws(NostrError) -> NIP98Authorization {
        guard let authorization else { throw NostrError(.missingHeader) }
        let header = Array(authorization.utf8)
        guard header.count <= Self.maximumHeaderLength else { throw NostrError(.headerTooLong) }
        guard let credentials = Self.credentials(of: header) else { throw NostrError(.notNostrScheme) }
        guard let json = Base64.decode(credentials) else { throw NostrError(.invalidBase64) }

        let event: NostrEvent
        do throws(NostrError) {
            event = try NostrEvent(json: json)
        } catch {
            throw NostrError(error.code == .invalidPublicKey ? .invalidPublicKey : .malformedEvent)
        }
        guard event.kind == Self.eventKind else { throw NostrError(.wrongKind) }

        let (age, overflow) = now.subtractingReportingOverflow(event.createdAt)
        guard !overflow else { throw NostrError(event.createdAt > now ? .tooFarInFuture : .tooOld) }
        guard age <= Self.maximumAge else { throw NostrError(.tooOld) }
        guard age >= -Self.maximumLead else { throw NostrError(.tooFarInFuture) }

        let tags = try RequiredTags(event.tags)
        guard let requestURL else { throw NostrError(.requestURLUndefined) }
        if let allowedPublicOrigins {
            let origin = requestURL.origin
            guard allowedPublicOrigins.contains(where: { UTF8Equality.equal($0, origin) }) else {
                throw NostrError(.originNotAllowed)
            }
        }
        // Byte comparisons throughout: String `==` would also accept canonically equivalent Unicode.
        guard UTF8Equality.equal(tags.url, requestURL.string) else { throw NostrError(.urlMismatch) }
        guard UTF8Equality.equal(tags.method, Self.method), UTF8Equality.equal(method, Self.method) else {
            throw NostrError(.methodMismatch)
        }
        guard UTF8Equality.equal(tags.payload, Hex.encode(SHA256.hash(body))) else {
            throw NostrError(.payloadMismatch)
        }

        guard event.computedID == event.id else { throw NostrError(.idMismatch) }
        guard event.hasValidSignature else { throw NostrError(.invalidSignature) }
        return NIP98Authorization(relayPublicKey: event.publicKey, eventID: event.id, createdAt: event.createdAt)
    }

    /// The token68 after the `Nostr` auth-scheme. The scheme is case-insensitive (RFC 9110 §11.1) and is
    /// followed by one or more spaces (§11.4) (docs/decisions/0040-nip98-auth-scheme.md).
    private static func credentials(of header: [UInt8]) -> ArraySlice<UInt8>? {
        let scheme = "nostr".utf8
        guard header.count > scheme.count,
            zip(header, scheme).allSatisfy({ received, expected in received | 0x20 == expected })
        else { return nil }
        let afterScheme = header[scheme.count...]
        guard afterScheme.first == UInt8(ascii: " ") else { return nil }
        let credentials = afterScheme.drop(while: { $0 == UInt8(ascii: " ") })
        return credentials.isEmpty ? nil : credentials
    }
}

/// The `u`, `method` and `payload` tag values, each present exactly once; other tags are ignored.
private struct RequiredTags {
    let url: String
    let method: String
    let payload: String

    init(_ tags: [[String]]) throws(NostrError) {
        var url: String?
        var method: String?
        var payload: String?
        for tag in tags {
            guard let name = tag.first else { continue }
            if UTF8Equality.equal(name, "u") {
                try Self.record(tag, in: &url)
            } else if UTF8Equality.equal(name, "method") {
                try Self.record(tag, in: &method)
            } else if UTF8Equality.equal(name, "payload") {
                try Self.record(tag, in: &payload)
            }
        }
        guard let url, let method, let payload else { throw NostrError(.missingTag) }
        self.url = url
        self.method = method
        self.payload = payload
    }

    private static func record(_ tag: [String], in slot: inout String?) throws(NostrError) {
        guard tag.count >= 2 else { throw NostrError(.malformedTag) }
        guard slot == nil else { throw NostrError(.repeatedTag) }
        slot = tag[1]
    }
}

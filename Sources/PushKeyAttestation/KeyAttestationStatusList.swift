import Glibc
import PushJSON
import PushSystem

/// Google's Key Attestation status list (docs/protocol.md §5a step 3) with the time it was fetched
/// (from a file: last modified). Its format: `{"entries":{"<serial hex>":{"status":"REVOKED"|
/// "SUSPENDED",…},…},…}`; every listed serial is refused whatever its status, and members other than
/// `entries` are ignored.
public struct KeyAttestationStatusList: Sendable, Equatable {
    /// docs/protocol.md §5a: at most 4 MiB.
    public static let maximumByteCount = 4 << 20
    /// docs/protocol.md §4.2a: a list older than 24 hours is not used.
    public static let maximumAgeSeconds: Int64 = 86_400

    /// Listed serial numbers in the form of ``AttestationCertificate/serialNumberHex``.
    public let listedSerials: Set<String>
    /// Unix seconds of the fetch that produced the list, or the modification time of the file it was
    /// read from.
    public let fetchedAt: Int64

    /// Parses the list's JSON. A list that does not parse is refused whole: a partly understood
    /// revocation list would let a revoked key through.
    public init(json: [UInt8], fetchedAt: Int64) throws(KeyAttestationError) {
        guard json.count <= Self.maximumByteCount else { throw KeyAttestationError(.tooLarge) }
        guard let document = try? JSONObject(JSONReader.parse(json)),
            case .object(let entries)? = try? document.value("entries")
        else { throw KeyAttestationError(.malformed) }
        var serials = Set<String>()
        for entry in entries {
            guard case .object = entry.value, let serial = SerialNumber.normalized(entry.name) else {
                throw KeyAttestationError(.malformed)
            }
            serials.insert(serial)
        }
        listedSerials = serials
        self.fetchedAt = fetchedAt
    }

    /// Reads the list an operator mirrors into `path` (`PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_FILE`).
    /// Its age is that of the file's modification time, not of the read: a mirror whose job stopped
    /// keeps an old file readable and valid, and must still trip the 24-hour guard (docs/protocol.md
    /// §5a step 3). A modification time ahead of `now` (a skewed clock) counts as `now`.
    public static func read(
        fromFile path: String, at now: Int64
    ) throws(KeyAttestationError) -> KeyAttestationStatusList {
        let file: (contents: [UInt8], modifiedAt: Int64)
        do {
            file = try FileContents.readStamped(path, limit: maximumByteCount)
        } catch {
            throw KeyAttestationError(error.errorNumber == EFBIG ? .tooLarge : .unreadable)
        }
        return try KeyAttestationStatusList(json: file.contents, fetchedAt: min(file.modifiedAt, now))
    }

    public func isListed(serialNumberHex: String) -> Bool { listedSerials.contains(serialNumberHex) }

    /// Seconds since the list was fetched (0 when the fetch time is ahead of `now`).
    public func ageSeconds(at now: Int64) -> Int64 { max(0, now - fetchedAt) }

    /// The list, when it is at most ``maximumAgeSeconds`` old at `now`; `.stale` otherwise (the
    /// enrollment route then answers 503 before any other work).
    public func usable(at now: Int64) throws(KeyAttestationError) -> KeyAttestationStatusList {
        guard ageSeconds(at: now) <= Self.maximumAgeSeconds else { throw KeyAttestationError(.stale) }
        return self
    }
}

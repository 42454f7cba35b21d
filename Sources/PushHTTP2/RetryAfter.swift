/// The `Retry-After` rule shared by the push services (docs/protocol.md §4.7).
public enum RetryAfter {
    /// `Retry-After` as delta-seconds (RFC 9110 §10.2.3) clamped to 1...3600; nil when absent or
    /// not a plain non-negative integer (an HTTP date or a fraction), as docs/protocol.md §4.7 says for APNs and FCM alike.
    public static func wholeSeconds(_ value: String?) -> Int? {
        guard let value else { return nil }
        let digits = value.utf8.drop(while: { $0 == 0x20 || $0 == 0x09 })
        let trimmed = digits.reversed().drop(while: { $0 == 0x20 || $0 == 0x09 }).reversed()
        guard !trimmed.isEmpty, trimmed.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        // Without leading zeros, more than 4 digits is at least 10000 s: clamp without overflow.
        let significant = trimmed.drop(while: { $0 == 0x30 })
        guard significant.count <= 4 else { return 3600 }
        let seconds = significant.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return min(max(seconds, 1), 3600)
    }
}

import GatewayConfiguration
import Glibc
import PushCrypto
import PushGateway

/// `push-gateway keygen [--id ID]` (docs/protocol.md §12): prints `ID:base64(32 random bytes)` for a
/// keyring or (without the `ID:`, which operators strip) the fingerprint key. The default id is
/// `k<UTC YYYYMMDD>-<4 random hex digits>` (docs/decisions/0016), so keys made the same day for
/// the grant and token keyrings do not share an id.
enum KeygenCommand: InProcessCommand {
    static let usage = "usage: push-gateway keygen [--id ID]\n"

    static func execute(arguments: [String], environment: [String: String]) -> CommandResult {
        execute(arguments: arguments, environment: environment, now: currentTime()) { try SecureRandom.bytes($0) }
    }

    /// The command with the clock (`now`, Unix seconds) and the randomness given, for tests.
    static func execute(
        arguments: [String], environment: [String: String], now: Int64, randomBytes: (Int) throws -> [UInt8]
    ) -> CommandResult {
        var requestedID: String?
        switch arguments.count {
        case 0: break
        case 2 where arguments[0] == "--id": requestedID = arguments[1]
        default: return .usageError("push-gateway keygen: the only option is --id ID\n" + usage)
        }
        if let requestedID, !ConfiguredKeyring.isValidKeyID(Substring(requestedID)) {
            return .usageError("push-gateway keygen: --id must be 1..32 characters of A-Z a-z 0-9 _ -\n")
        }
        do {
            let key = try randomBytes(ConfiguredKeyring.keyLength)
            let id = try requestedID ?? defaultID(now: now, suffix: randomBytes(2))
            return .success("\(id):\(Base64.encode(key))\n")
        } catch {
            return .failure("push-gateway keygen: secure randomness unavailable\n")
        }
    }

    static func currentTime() -> Int64 { Int64(time(nil)) }

    /// `k` + UTC date `YYYYMMDD` + `-` + the suffix bytes as lowercase hex.
    static func defaultID(now: Int64, suffix: [UInt8]) -> String {
        var seconds = time_t(now)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func padded(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let date = padded(parts.tm_year + 1900, 4) + padded(parts.tm_mon + 1, 2) + padded(parts.tm_mday, 2)
        let hex = suffix.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }
        return "k" + date + "-" + hex.joined()
    }
}

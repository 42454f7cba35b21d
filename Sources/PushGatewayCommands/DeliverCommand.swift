import Foundation
import GatewayCredentials
import PushCrypto
import PushGateway
import PushJSON
import PushNostr
import PushRelayClient
import PushSystem

/// `push-gateway deliver --url URL --relay-key-file F --grant G [--request-id UUID]
/// [--expires-in SECONDS]` (docs/protocol.md §12): the relay side of one delivery. Signs NIP-98 for the
/// exact URL (either path of the delivery route, docs/protocol.md §4.7) and body, posts once, prints
/// the HTTP status on the first line and the body on the second; exit 0 for a 2xx, 1 for any other
/// answer or a transport failure, 2 for usage errors (docs/decisions/0084). With `--grants-file F` instead of `--grant`, batches (DeliverCommand+Batch).
package enum DeliverCommand: InProcessCommand {
    static let usage = """
        usage: push-gateway deliver --url URL --relay-key-file FILE --grant GRANT [--request-id UUID] \
        [--expires-in SECONDS]
               push-gateway deliver --url URL --relay-key-file FILE --grants-file FILE [--expires-in SECONDS]

        """

    /// The default request lifetime (docs/protocol.md §12).
    static let defaultExpiresIn: Int64 = 60
    /// The largest `--expires-in`: one year, the longest a grant can live (docs/protocol.md §12).
    static let maximumExpiresIn: Int64 = 31_536_000

    /// The parsed flags.
    struct Options: Equatable {
        var url: String
        var relayKeyFile: String
        var grant: String
        /// `--grants-file`, given instead of `--grant` (which is then empty).
        var grantsFile: String? = nil
        var requestID: CanonicalUUID?
        var expiresIn: Int64
    }

    static func execute(arguments: [String], environment: [String: String]) -> CommandResult {
        execute(arguments: arguments, now: Int64(Date().timeIntervalSince1970), client: HTTPPostClient())
    }

    /// The command with the clock (Unix seconds) and the HTTP client given, for tests.
    static func execute(arguments: [String], now: Int64, client: HTTPPostClient) -> CommandResult {
        let options: Options
        switch parse(arguments) {
        case .success(let parsed): options = parsed
        case .failure(let problem): return .usageError("push-gateway deliver: \(problem.message)\n" + usage)
        }
        let keyText: String
        switch readKeyFile(options.relayKeyFile) {
        case .success(let text): keyText = text
        case .failure(let problem): return .usageError("push-gateway deliver: --relay-key-file \(problem.message)\n")
        }
        guard let key = relayKey(fromFileContents: keyText) else {
            return .usageError(
                "push-gateway deliver: --relay-key-file must hold a secp256k1 secret key as 64 lowercase hex "
                    + "characters (a trailing newline is allowed)\n")
        }
        if let grantsFile = options.grantsFile {
            return executeBatches(options: options, grantsFile: grantsFile, key: key, now: now, client: client)
        }
        let requestID: CanonicalUUID
        if let given = options.requestID {
            requestID = given
        } else {
            guard let fresh = try? CanonicalUUID.version4() else {
                return .failure("push-gateway deliver: secure randomness unavailable\n")
            }
            requestID = fresh
        }
        let body = requestBody(grant: options.grant, requestID: requestID, expiresAt: now + options.expiresIn)
        let response: HTTPResponse
        do throws(RelayClientError) {
            response = try RelayDeliveryPoster(key: key, client: client).post(url: options.url, body: body, now: now)
        } catch {
            return .failure("push-gateway deliver: \(postProblem(error))\n")
        }
        let output = "\(response.status)\n" + String(decoding: response.body, as: UTF8.self) + "\n"
        return CommandResult(
            exitCode: (200...299).contains(response.status) ? 0 : 1, standardOutput: output, standardError: "")
    }

    /// What `deliver` prints when a post produced no answer.
    static func postProblem(_ error: RelayClientError) -> String {
        error.code == .randomnessUnavailable ? error.description : "no HTTP answer: \(error.description)"
    }

    /// The body of docs/protocol.md §4.7, `{"v":1,"endpoint_grant":…,"request_id":…,"expires_at":…}`.
    package static func requestBody(grant: String, requestID: CanonicalUUID, expiresAt: Int64) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 256)
        writer.beginObject()
        writer.member("v", 1)
        writer.member("endpoint_grant", grant)
        writer.member("request_id", requestID.text)
        writer.member("expires_at", expiresAt)
        writer.endObject()
        return writer.bytes
    }

    /// A key file holds exactly 64 lowercase hex characters, optionally followed by one newline.
    static func relayKey(fromFileContents contents: String) -> SchnorrSigningKey? {
        var text = Substring(contents)
        if text.utf8.last == UInt8(ascii: "\n") { text = text.dropLast() }
        guard let bytes = Hex.decode(String(text), byteCount: 32, lowercaseOnly: true) else { return nil }
        return SchnorrSigningKey(secretKey: bytes)
    }

    /// The key file's text, or why it cannot be read (the system's reason, never its contents).
    static func readKeyFile(_ path: String) -> Result<String, UsageError> {
        let bytes: [UInt8]
        do {
            // A key file is 65 bytes; anything far larger is not one.
            bytes = try FileContents.read(path, limit: 4096)
        } catch {
            return .failure(UsageError("cannot be read: \(error.reason)"))
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(UsageError("is not text"))
        }
        return .success(text)
    }

    static func parse(_ arguments: [String]) -> Result<Options, UsageError> {
        var values: [String: String] = [:]
        var index = 0
        let flags = ["--url", "--relay-key-file", "--grant", "--grants-file", "--request-id", "--expires-in"]
        while index < arguments.count {
            let flag = arguments[index]
            guard flags.contains(flag) else { return .failure(UsageError("unknown argument '\(flag)'")) }
            guard index + 1 < arguments.count else { return .failure(UsageError("\(flag) needs a value")) }
            guard values[flag] == nil else { return .failure(UsageError("\(flag) is given twice")) }
            values[flag] = arguments[index + 1]
            index += 2
        }
        // docs/protocol.md §12: `--grants-file` replaces `--grant`; each grant gets its own request id.
        let grantsFile = values["--grants-file"]
        guard grantsFile == nil || (values["--grant"] == nil && values["--request-id"] == nil) else {
            return .failure(UsageError("--grants-file excludes --grant and --request-id"))
        }
        guard let url = values["--url"], let keyFile = values["--relay-key-file"],
            let grant = values["--grant"] ?? grantsFile.map({ _ in "" })
        else {
            return .failure(
                UsageError("--url, --relay-key-file and --grant (or --grants-file) are required"))
        }
        guard url.hasPrefix("https://") || url.hasPrefix("http://") else {
            return .failure(UsageError("--url must be an http:// or https:// URL"))
        }
        var requestID: CanonicalUUID?
        if let text = values["--request-id"] {
            guard let parsed = CanonicalUUID(text) else {
                return .failure(UsageError("--request-id must be a lowercase hyphenated UUID"))
            }
            requestID = parsed
        }
        var expiresIn = defaultExpiresIn
        if let text = values["--expires-in"] {
            guard text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                let parsed = Int64(text), (0...maximumExpiresIn).contains(parsed)
            else {
                return .failure(
                    UsageError("--expires-in must be whole seconds between 0 and \(maximumExpiresIn)"))
            }
            expiresIn = parsed
        }
        return .success(
            Options(
                url: url, relayKeyFile: keyFile, grant: grant, grantsFile: grantsFile, requestID: requestID,
                expiresIn: expiresIn))
    }
}

import Foundation
import GatewayAPI
import GatewayCredentials
import PushCrypto
import PushGateway
import PushJSON
import PushNostr
import PushRelayClient

/// `push-gateway deliver --grants-file F` (docs/protocol.md §12, §4.8): the grants of `F`, one per line,
/// posted as batches of up to 100 to `URL` + `/batch`, each with a fresh request id and each batch
/// with its own NIP-98 event. Prints one line per grant in file order, `<code> <result body>`; a
/// batch refused as a whole prints its status and body on each of its grants' lines
/// (docs/decisions/0222). Exits 0 only when every item got a 2xx.
extension DeliverCommand {
    static func executeBatches(
        options: Options, grantsFile: String, key: SchnorrSigningKey, now: Int64, client: HTTPPostClient
    ) -> CommandResult {
        guard let contents = try? String(contentsOfFile: grantsFile, encoding: .utf8) else {
            return .usageError("push-gateway deliver: --grants-file cannot be read\n")
        }
        let grants = grantLines(contents)
        guard !grants.isEmpty else { return .usageError("push-gateway deliver: --grants-file holds no grant\n") }
        let poster = RelayDeliveryPoster(key: key, client: client)
        var output = ""
        var allAccepted = true
        for start in stride(from: 0, to: grants.count, by: BatchDeliveryRequest.maximumItems) {
            let chunk = Array(grants[start..<min(start + BatchDeliveryRequest.maximumItems, grants.count)])
            var items: [(grant: String, requestID: CanonicalUUID)] = []
            for grant in chunk {
                guard let requestID = try? CanonicalUUID.version4() else {
                    return CommandResult(
                        exitCode: 1, standardOutput: output,
                        standardError: "push-gateway deliver: secure randomness unavailable\n")
                }
                items.append((grant, requestID))
            }
            let body = batchRequestBody(items: items, expiresAt: now + options.expiresIn)
            let response: HTTPResponse
            do throws(RelayClientError) {
                response = try poster.post(url: options.url + "/batch", body: body, now: now)
            } catch {
                return CommandResult(
                    exitCode: 1, standardOutput: output,
                    standardError: "push-gateway deliver: \(postProblem(error))\n")
            }
            guard let lines = resultLines(response, count: chunk.count) else {
                return CommandResult(
                    exitCode: 1, standardOutput: output,
                    standardError: "push-gateway deliver: the batch answer is not one result per grant\n")
            }
            for line in lines {
                output += "\(line.code) \(line.body)\n"
                if !(200...299).contains(line.code) { allAccepted = false }
            }
        }
        return CommandResult(exitCode: allAccepted ? 0 : 1, standardOutput: output, standardError: "")
    }

    /// The file's grants: one per line (`\n` or `\r\n`), empty lines skipped.
    static func grantLines(_ contents: String) -> [String] {
        // "\r\n" is one Character in Swift, so it is named as a separator of its own.
        contents.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map(String.init)
    }

    /// The body of docs/protocol.md §4.8, `{"v":1,"deliveries":[{"endpoint_grant":…,"request_id":…,"expires_at":…},…]}`.
    package static func batchRequestBody(
        items: [(grant: String, requestID: CanonicalUUID)], expiresAt: Int64
    )
        -> [UInt8]
    {
        var writer = JSONWriter(reservingCapacity: 64 + items.count * 320)
        writer.beginObject()
        writer.member("v", 1)
        writer.name("deliveries")
        writer.beginArray()
        for item in items {
            writer.beginObject()
            writer.member("endpoint_grant", item.grant)
            writer.member("request_id", item.requestID.text)
            writer.member("expires_at", expiresAt)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.bytes
    }

    /// One `(code, body)` per grant: a 200's results with `code` taken out of each, or the whole
    /// answer repeated for a batch refused as a whole. Nil when a 200 does not hold `count` results.
    static func resultLines(_ response: HTTPResponse, count: Int) -> [(code: Int, body: String)]? {
        let text = String(decoding: response.body, as: UTF8.self)
        guard response.status == 200 else { return Array(repeating: (response.status, text), count: count) }
        guard let answer = try? JSONReader.parse(response.body), let object = try? JSONObject(answer),
            let results = try? object.array("results"), results.count == count
        else { return nil }
        var lines: [(code: Int, body: String)] = []
        for result in results {
            guard case .object(let members) = result, let first = members.first, first.name == "code",
                case .integer(let code) = first.value
            else { return nil }
            let body = JSONWriter.serialize(.object(Array(members.dropFirst())))
            lines.append((Int(code), String(decoding: body, as: UTF8.self)))
        }
        return lines
    }
}

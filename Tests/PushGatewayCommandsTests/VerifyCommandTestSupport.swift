import Foundation
import PushCrypto
import Testing

@testable import PushGateway
@testable import PushGatewayCommands

/// The parsed JSON object a verify command printed.
func printedObject(_ output: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(output.utf8))
    guard let dictionary = object as? [String: Any] else { throw CocoaError(.coderInvalidValue) }
    return dictionary
}

/// `--name value` pairs of `flags` with `overrides` applied (a nil value drops the flag), in name order.
func commandArguments(_ flags: [String: String?], overriddenBy overrides: [String: String?]) -> [String] {
    var flags = flags
    for (name, value) in overrides { flags[name] = value }
    return flags.sorted { $0.key < $1.key }.flatMap { name, value in value.map { [name, $0] } ?? [] }
}

/// Expects a verify command's verdict "invalid for `reason`": that JSON object alone and exit status 1.
func expectInvalid(_ result: CommandResult, _ reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.exitCode == 1, sourceLocation: sourceLocation)
    #expect(result.standardOutput == "{\"ok\":false,\"reason\":\"\(reason)\"}\n", sourceLocation: sourceLocation)
}

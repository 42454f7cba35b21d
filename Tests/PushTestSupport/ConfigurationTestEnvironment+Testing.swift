import GatewayConfiguration
import PushGateway
import Testing

extension ConfigurationTestEnvironment {
    /// The configuration; records an issue with the errors when it does not parse.
    public func configuration(sourceLocation: SourceLocation = #_sourceLocation) -> GatewayConfiguration? {
        switch parse() {
        case .success(let configuration): return configuration
        case .failure(let failure):
            Issue.record("configuration rejected: \(failure)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// `environment` with every value under /etc/push-gateway/secrets/ (the chart's mount and the
    /// env example's folder) replaced by a file in `reference`'s directory holding a valid value.
    public static func withSecretFiles(
        _ environment: [String: String], in reference: ConfigurationTestEnvironment, apnsKeyFile: String,
        otherFiles: [String: String] = [:]
    ) throws -> [String: String] {
        let secretsDirectory = "/etc/push-gateway/secrets/"
        let files = [
            "database-url": "postgresql://gateway@db.internal/push",
            "grant-keys": reference.variables["PUSH_GATEWAY_GRANT_KEYS"]!,
            "token-keys": reference.variables["PUSH_GATEWAY_TOKEN_KEYS"]!,
            "challenge-keys": reference.variables["PUSH_GATEWAY_CHALLENGE_KEYS"]!,
            "fingerprint-key": reference.variables["PUSH_GATEWAY_FINGERPRINT_KEY"]!,
            apnsKeyFile: ConfigurationTestEnvironment.privateKeyPEM,
        ].merging(otherFiles) { _, other in other }
        var result: [String: String] = [:]
        for (name, value) in environment {
            guard value.hasPrefix(secretsDirectory) else {
                result[name] = value
                continue
            }
            let file = String(value.dropFirst(secretsDirectory.count))
            result[name] = try reference.write(file, try #require(files[file], "unexpected secret file \(file)"))
        }
        return result
    }
}

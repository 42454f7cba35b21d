import Foundation

/// Secret variables (`DATABASE_URL` and the four key variables) may instead be given as
/// `<NAME>_FILE`, a path to a file holding the value with its trailing newline trimmed; setting
/// both is an error (docs/protocol.md §12).
package enum SecretVariable {
    /// The value of `name` or of the file named by `<name>_FILE`; nil when neither is set.
    package static func value(_ name: String, in environment: [String: String]) throws(ConfigurationError) -> String? {
        let fileVariable = name + "_FILE"
        switch (environment[name], environment[fileVariable]) {
        case (.some, .some):
            throw ConfigurationError(
                .invalidSecretVariable, variable: name, problem: "set both \(name) and \(fileVariable); set only one")
        case (.some(let value), .none):
            return value
        case (.none, .some(let path)):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(
                    .invalidSecretVariable, variable: fileVariable, problem: "the file cannot be read")
            }
            guard var text = String(data: data, encoding: .utf8) else {
                throw ConfigurationError(
                    .invalidSecretVariable, variable: fileVariable, problem: "the file is not UTF-8 text")
            }
            if text.hasSuffix("\r\n") {
                text.removeLast(2)
            } else if text.hasSuffix("\n") {
                text.removeLast()
            }
            return text
        case (.none, .none):
            return nil
        }
    }
}

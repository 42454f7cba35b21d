import PushCrypto
import PushJSON

/// The members of a Google service-account JSON file that the OAuth assertion needs
/// (docs/protocol.md §8a). Every other member, `token_uri` included, is ignored: the assertion is
/// only ever posted to Google's token endpoint. Prints without its key.
public struct ServiceAccount: Sendable {
    public static let maximumFileSize = 65_536

    public let clientEmail: String
    public let privateKeyID: String
    public let projectID: String
    public let privateKey: X509SigningKey

    /// Parses the file's bytes; every refusal is one closed reason and echoes nothing of the input.
    public static func parse(_ bytes: [UInt8]) throws(FCMError) -> ServiceAccount {
        guard bytes.count <= maximumFileSize else { throw FCMError(.tooLarge) }
        guard let value = try? JSONReader.parse(bytes), let object = try? JSONObject(value) else {
            throw FCMError(.notJSONObject)
        }
        guard (try? object.string("type")) == "service_account" else { throw FCMError(.notServiceAccount) }
        guard let email = try? object.string("client_email"), isPlausibleEmail(email) else {
            throw FCMError(.invalidClientEmail)
        }
        guard let keyID = try? object.string("private_key_id"), isKeyID(keyID) else {
            throw FCMError(.invalidPrivateKeyID)
        }
        guard let project = try? object.string("project_id"), isProjectID(project) else {
            throw FCMError(.invalidProjectID)
        }
        guard let pem = try? object.string("private_key"), let key = try? X509SigningKey(rsaPEM: pem) else {
            throw FCMError(.invalidPrivateKey)
        }
        return ServiceAccount(clientEmail: email, privateKeyID: keyID, projectID: project, privateKey: key)
    }

    /// One `@`, something on both sides, printable ASCII without quotes, backslashes or spaces (the
    /// value goes into a JWT claim verbatim).
    static func isPlausibleEmail(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (3...254).contains(bytes.count), bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != 0x22 && $0 != 0x5c })
        else { return false }
        let parts = bytes.split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty
    }

    static func isKeyID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return (1...128).contains(bytes.count)
            && bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    /// Google Cloud project ids: 6..30 lowercase letters, digits and hyphens, starting with a letter.
    static func isProjectID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (6...30).contains(bytes.count), let first = bytes.first, (0x61...0x7a).contains(first) else {
            return false
        }
        return bytes.allSatisfy { (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "-") }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
    }
}

extension ServiceAccount: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "ServiceAccount(project \(projectID), private key <redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["projectID": projectID], displayStyle: .struct) }
}

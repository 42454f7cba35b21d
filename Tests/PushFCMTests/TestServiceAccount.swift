import PushCrypto
import PushFCM
import PushJSON

/// One RSA key for the whole test process (generating 2048-bit keys is slow) and the service-account
/// files built around it.
enum TestServiceAccount {
    static let key: X509SigningKey = try! X509SigningKey.rsa(bits: 2048)
    static let projectID = "wake-test-1"
    static let clientEmail = "gateway@wake-test-1.iam.gserviceaccount.com"
    static let privateKeyID = "0123abcd4567ef89"

    /// A file as Google issues it, with the members the gateway ignores.
    static func fileBytes(
        type: String = "service_account", clientEmail: String = clientEmail, privateKeyID: String = privateKeyID,
        projectID: String = projectID, privateKeyPEM: String? = nil, omitting omitted: String? = nil
    ) -> [UInt8] {
        let members: [(String, String)] = [
            ("type", type), ("project_id", projectID), ("private_key_id", privateKeyID),
            ("private_key", privateKeyPEM ?? (try! key.pkcs8PEM())), ("client_email", clientEmail),
            ("client_id", "104"), ("token_uri", "https://attacker.example/token"),
        ]
        var writer = JSONWriter()
        writer.beginObject()
        for (name, value) in members where name != omitted { writer.member(name, value) }
        writer.endObject()
        return writer.bytes
    }

    static let account: ServiceAccount = try! ServiceAccount.parse(fileBytes())
}

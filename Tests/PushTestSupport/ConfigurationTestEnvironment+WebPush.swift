import Foundation
import PushCrypto

/// A `webpush` android profile (docs/protocol.md §8b, §12) for configuration and end-to-end tests.
extension ConfigurationTestEnvironment {
    public static let webPushProfileKey = "PUSH_GATEWAY_PROFILE_BUZZ_ANDROID_"
    public static let webPushSubject = "mailto:ops@example.org"

    /// The android profile of `withAndroidProfile` with `PROVIDER=webpush`: the FCM variables
    /// removed and the VAPID key (`keyPEM`, a fresh PKCS#8 key when nil) and subject set.
    public func withWebPushProfile(
        authority: SyntheticKeyAttestationAuthority, keyPEM: String? = nil
    ) throws -> ConfigurationTestEnvironment {
        let key = Self.webPushProfileKey
        let pem = try keyPEM ?? P256PrivateKey.generate().pkcs8PEM()
        return try withAndroidProfile(authority: authority)
            .with(key + "PROVIDER", "webpush")
            .with(key + "FCM_PROJECT_ID", nil)
            .with(key + "FCM_SERVICE_ACCOUNT_FILE", nil)
            .with(key + "WEBPUSH_VAPID_KEY_FILE", try write("vapid.pem", pem))
            .with(key + "WEBPUSH_VAPID_SUBJECT", Self.webPushSubject)
    }

    /// Runs `openssl` with `arguments` and returns its standard output.
    public static func openssl(_ arguments: [String], input: Data? = nil) throws -> Data {
        let outcome = try ToolProcess.run(URL(fileURLWithPath: "/usr/bin/openssl"), arguments, input: input)
        guard outcome.status == 0 else { throw TestSupportError("openssl \(arguments[0]) failed: \(outcome.errors)") }
        return outcome.output
    }

    /// `k=` computed by openssl, independently of PushCrypto: the unpadded base64url of the last
    /// 65 bytes of the key's SubjectPublicKeyInfo (the uncompressed point).
    public static func vapidPublicKeyByOpenSSL(_ pem: String) throws -> String {
        let spki = try openssl(["pkey", "-pubout", "-outform", "DER"], input: Data(pem.utf8))
        return Base64.encodeURLNoPadding(Array(spki.suffix(65)))
    }
}

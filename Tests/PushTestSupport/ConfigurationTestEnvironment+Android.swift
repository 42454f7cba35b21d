import PushCrypto
import PushJSON

/// An Android profile (docs/protocol.md §12) whose Key Attestation root is a synthetic authority.
extension ConfigurationTestEnvironment {
    public static let androidProfile = "buzz-android"
    public static let androidPackage = "xyz.buzz.android"
    /// The app's signing-certificate digest the profile accepts.
    public static let androidSigningDigest = SHA256.hash(Array("buzz android signing certificate".utf8))
    public static let fcmProjectID = "buzz-wake-1"

    /// One RSA key for every service-account file of the test process (2048-bit generation is slow).
    private static let serviceAccountKey: X509SigningKey = try! X509SigningKey.rsa(bits: 2048)
    /// The key a token endpoint checks the service account's assertions with.
    public static var serviceAccountPublicKey: X509PublicKey { serviceAccountKey.publicKey }

    public static func serviceAccountEmail(projectID: String = fcmProjectID) -> String {
        "gateway@\(projectID).iam.gserviceaccount.com"
    }

    /// A service-account file as Google issues it (docs/protocol.md §8a).
    public static func serviceAccountJSON(projectID: String = fcmProjectID) -> String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("type", "service_account")
        writer.member("project_id", projectID)
        writer.member("private_key_id", "0123abcd4567ef89")
        writer.member("private_key", try! serviceAccountKey.pkcs8PEM())
        writer.member("client_email", serviceAccountEmail(projectID: projectID))
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The PEM of one DER certificate.
    public static func certificatePEM(_ der: [UInt8]) -> String {
        "-----BEGIN CERTIFICATE-----\n" + Base64.encode(der) + "\n-----END CERTIFICATE-----\n"
    }

    /// This environment with the Android profile `buzz-android` enabled beside the existing ones, the
    /// synthetic `authority` trusted as the explicit untrusted root, and a status list file holding
    /// `statusList` (nil: no status file).
    public func withAndroidProfile(
        authority: SyntheticKeyAttestationAuthority, statusList: String? = #"{"entries":{}}"#
    ) throws -> ConfigurationTestEnvironment {
        let key = "PUSH_GATEWAY_PROFILE_BUZZ_ANDROID_"
        var environment =
            with("PUSH_GATEWAY_PROFILES", (variables["PUSH_GATEWAY_PROFILES"] ?? "") + "," + Self.androidProfile)
            .with(key + "PLATFORM", "android")
            .with(key + "ANDROID_PACKAGE", Self.androidPackage)
            .with(key + "ANDROID_SIGNING_CERT_SHA256", Hex.encode(Self.androidSigningDigest))
            .with(key + "FCM_PROJECT_ID", Self.fcmProjectID)
            .with(key + "FCM_SERVICE_ACCOUNT_FILE", try write("service-account.json", Self.serviceAccountJSON()))
            .with(
                "PUSH_GATEWAY_ANDROID_ATTESTATION_ROOT_CA_FILE",
                try write("key-attestation-root.pem", Self.certificatePEM(authority.root.derEncoded))
            )
            .with("PUSH_GATEWAY_ALLOW_UNTRUSTED_ANDROID_ROOT", "true")
        if let statusList {
            environment = environment.with(
                "PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_FILE", try write("attestation-status.json", statusList))
        }
        return environment
    }
}

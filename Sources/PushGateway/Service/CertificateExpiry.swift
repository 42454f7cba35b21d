import GatewayConfiguration
import PushAPNs
import PushCrypto

/// The `notAfter` of every certificate-auth profile (docs/protocol.md §12): expired is a
/// configuration error, within `warningWindow` a warning at start and once a day, and each shows
/// in `push_gateway_apns_certificate_expiry_timestamp_seconds{profile}`.
struct CertificateExpiry: Sendable, Equatable {
    static let warningWindowSeconds: Int64 = 30 * 86_400

    let profile: String
    /// The variable that names the certificate file, for error messages.
    let variable: String
    let notAfter: Int64

    /// One entry per certificate-auth `apns` profile whose settings the APNs module accepts and
    /// whose certificate could be read.
    static func of(_ configuration: GatewayConfiguration) -> [CertificateExpiry] {
        configuration.profiles.compactMap { profile in
            guard profile.provider == .apns,
                case .certificate(let pem, _)? = try? APNsProfileSettings(profile).authentication,
                let certificate = try? X509Certificate(pem: String(decoding: pem.bytes, as: UTF8.self)),
                let notAfter = certificate.notAfterUnixSeconds
            else { return nil }
            return CertificateExpiry(
                profile: profile.id, variable: profile.variable("APNS_CERT_FILE"),
                notAfter: notAfter)
        }
    }

    func isExpired(at now: Int64) -> Bool { notAfter <= now }

    func expiresSoon(at now: Int64) -> Bool { !isExpired(at: now) && notAfter - now <= Self.warningWindowSeconds }

    /// Whole days left (rounded down), for the warning.
    func daysLeft(at now: Int64) -> Int64 { max(0, (notAfter - now) / 86_400) }
}

/// The App Attest environment of an app profile (docs/protocol.md §12
/// `PUSH_GATEWAY_PROFILE_<P>_APP_ATTEST_ENVIRONMENT`), which fixes the AAGUID (§5 step 5).
public enum AppAttestEnvironment: String, Sendable, CaseIterable {
    case production
    case development

    /// The 16-byte AAGUID Apple writes into authenticator data for this environment:
    /// `appattest` followed by seven zero bytes, or `appattestdevelop`.
    public var aaguid: [UInt8] {
        switch self {
        case .production: Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        case .development: Array("appattestdevelop".utf8)
        }
    }
}

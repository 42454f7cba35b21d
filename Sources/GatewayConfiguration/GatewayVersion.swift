/// The one source of the gateway's version (docs/decisions/0181): `scripts/stamp-version` rewrites
/// `stamped` with the release tag when a release is built from a tag; every other build reports
/// `development`.
public enum GatewayVersion {
    /// The release tag this binary was built from, nil for a development build.
    static let stamped: String? = nil

    /// What `--version`, the start log line and `push_gateway_build_info` report.
    public static let current = stamped ?? "development"
}

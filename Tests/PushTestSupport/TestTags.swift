import Testing

/// What a suite needs beyond the test process, so that a run can select or skip it
/// (`swift test --filter`/`--skip` name targets and suites; tags say why a suite is slow or
/// needs the machine scripts/test prepares).
extension Tag {
    /// Needs the PostgreSQL scripts/test starts (DATABASE_URL) or a private cluster of its binaries.
    @Tag public static var postgres: Self
    /// Starts child processes: push-gateway serve or migrate, apns-mock, python3, helm.
    @Tag public static var process: Self
    /// Needs a tool scripts/lib/packages.sh installs: pgbouncer, nginx, Prometheus, promtool, helm,
    /// or the PyPI packages of Tests/requirements.txt.
    @Tag public static var external: Self
    /// Waits on real timeouts or runs for several seconds.
    @Tag public static var slow: Self
}

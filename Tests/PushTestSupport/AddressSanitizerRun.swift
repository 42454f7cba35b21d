import Foundation

/// Whether this test run is the AddressSanitizer build of `scripts/test-asan`, which sets
/// `PUSH_GATEWAY_TEST_ASAN=1`. ASan's shadow memory and its quarantine of freed blocks make a
/// process's resident set meaningless as a leak measure, so tests skip only their memory-bound
/// assertions then (docs/reliability.md, "Sanitizers"); everything else they check still runs.
public enum AddressSanitizerRun {
    public static var isActive: Bool { ProcessInfo.processInfo.environment["PUSH_GATEWAY_TEST_ASAN"] == "1" }
}

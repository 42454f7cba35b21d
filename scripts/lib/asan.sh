# Sourced: run_address_sanitized_suite [ARGS...] builds the package and its tests with
# AddressSanitizer into .build/asan and runs `swift test` there (docs/reliability.md, "Sanitizers"),
# with LeakSanitizer at exit. Any report fails the command: ASan aborts the process at its first
# finding and LeakSanitizer turns the exit status non-zero. Extra arguments go to `swift test`.
#
# PUSH_GATEWAY_TEST_ASAN=1 tells the tests that measure resident memory to skip only those
# assertions: ASan's shadow memory and its quarantine of freed blocks (256 MiB by default) make
# VmRSS meaningless as a leak measure. Everything else they check still runs. The suppression files
# name toolchain code only (see the comments in them). The subprocesses the tests start (serve,
# apns-mock, migrate) are ASan builds too and inherit these options.
run_address_sanitized_suite() {
    swift build --build-tests --sanitize=address --build-path .build/asan
    PUSH_GATEWAY_TEST_ASAN=1 \
        ASAN_OPTIONS=${ASAN_OPTIONS:-suppressions=$PWD/scripts/lib/asan.supp} \
        LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lib/lsan.supp:print_suppressions=0} \
        swift test --skip-build --sanitize=address --build-path .build/asan "$@"
}

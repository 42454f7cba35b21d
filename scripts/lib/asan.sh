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
#
# Suites whose subject is a document, the Helm chart's templates or the alert rules, checked by
# Python, helm and promtool: they run no code of ours that the normal pass and the other suites do
# not already run under the sanitizers, so the sanitized pass leaves them out (docs/reliability.md,
# "Sanitizers").
ASAN_SKIPPED_SUITES='PushGatewayDocsTests|HelmChartTests|HelmChartWebPushTests|PrometheusRuleUnitTests'
#
# Without arguments the suite runs in two parts: PushGatewayClientTests alone with the URLSession
# suppressions of scripts/lib/lsan-urlsession.supp (FoundationNetworking's leaks inside libcurl),
# and everything else without them, so that no libcurl leak of our own (PushRelayClient) can hide
# behind that suppression.
run_address_sanitized_suite() {
    finish_address_sanitized_build
    if [ $# -gt 0 ]; then
        address_sanitized_swift_test scripts/lib/lsan.supp "$@"
        return
    fi
    address_sanitized_swift_test scripts/lib/lsan.supp \
        --skip "PushGatewayClientTests|$ASAN_SKIPPED_SUITES|${EXCLUSIVE_SUITES:-^$}"
    [ -z "${EXCLUSIVE_SUITES:-}" ] || SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=1 \
        address_sanitized_swift_test scripts/lib/lsan.supp --filter "$EXCLUSIVE_SUITES"
    local combined
    combined=$(mktemp -t push-gateway-lsan.XXXXXX)
    cat scripts/lib/lsan.supp scripts/lib/lsan-urlsession.supp >"$combined"
    address_sanitized_swift_test "$combined" --filter PushGatewayClientTests
    rm -f "$combined"
}

# address_sanitized_swift_test LSAN_SUPPRESSIONS [ARGS...]: `swift test` on the ASan build.
address_sanitized_swift_test() {
    local leak_suppressions
    leak_suppressions=$(realpath "$1")
    shift
    PUSH_GATEWAY_TEST_ASAN=1 \
        ASAN_OPTIONS=${ASAN_OPTIONS:-suppressions=$PWD/scripts/lib/asan.supp} \
        LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$leak_suppressions:print_suppressions=0} \
        swift test --skip-build --sanitize=address --build-path .build/asan "$@"
}

# start_address_sanitized_build LOG: starts the sanitized build, and after it the fuzzer's build
# (scripts/fuzz --build-only), in the background at the lowest CPU priority, so that they take the
# core the other steps leave idle while they wait on sockets and child processes (docs/reliability.md,
# "Test command time") without slowing them; run_address_sanitized_suite waits for both. The fuzz
# step's own `swift build` then finds push-fuzz built. Without a call, that function builds the
# sanitized tests in the foreground.
start_address_sanitized_build() {
    address_sanitized_build_log=$1
    {
        nice -n 19 swift build --build-tests --sanitize=address --build-path .build/asan &&
            nice -n 19 scripts/fuzz --build-only
    } >"$address_sanitized_build_log" 2>&1 &
    address_sanitized_build_pid=$!
}

# Waits for the background sanitized build (its output printed if it failed), or builds now.
finish_address_sanitized_build() {
    [ -z "${address_sanitized_build_done:-}" ] || return 0
    if [ -z "${address_sanitized_build_pid:-}" ]; then
        swift build --build-tests --sanitize=address --build-path .build/asan
    else
        local pid=$address_sanitized_build_pid
        address_sanitized_build_pid=
        if ! wait "$pid"; then
            cat "$address_sanitized_build_log" >&2
            return 1
        fi
    fi
    address_sanitized_build_done=1
}

# Stops a background sanitized build still running (the test command failed before it waited).
stop_address_sanitized_build() {
    [ -z "${address_sanitized_build_pid:-}" ] || kill "$address_sanitized_build_pid" 2>/dev/null || true
}

# Sourced by scripts/run-local, scripts/bench-deliveries and scripts/profile-deliveries: the local
# stand-ins for Apple's services (docs/decisions/0110), and scripts/lib/local-mock.sh's
# prepare_local_tls.

# shellcheck source=scripts/lib/local-mock.sh
source "$(dirname "${BASH_SOURCE[0]}")/local-mock.sh"

# start_apns_mock MOCK TLS_DIR RECORD_FILE P8_FILE starts the `apns-mock` binary MOCK on a free
# loopback port with the certificate of TLS_DIR, appending every request to RECORD_FILE, and points
# the sandbox APNs URL of the gateway at it (PUSH_GATEWAY_APNS_URL_SANDBOX, PUSH_GATEWAY_APNS_CA_FILE).
# When the mock knows --provider-public-key, it also checks the ES256 signature of every provider
# token against the public key of P8_FILE. stop_apns_mock stops it.
start_apns_mock() {
    local mock=$1 tls=$2 record=$3 p8=$4
    local state
    state=$(dirname "$record")
    local arguments=(--listen 127.0.0.1:0 --cert-file "$tls/server.pem" --key-file "$tls/server.key" --record "$record")
    # The usage text (`--help`, standard output) names the flag when this mock has it.
    local usage
    usage=$("$mock" --help 2>&1 || true)
    if [[ $usage == *--provider-public-key* ]]; then
        openssl pkey -in "$p8" -pubout -out "$state/apns-provider-public-key.pem"
        arguments+=(--provider-public-key "$state/apns-provider-public-key.pem")
    fi
    start_local_mock apns-mock "$state" "$mock" "${arguments[@]}" || return 1
    APNS_MOCK_PID=$LOCAL_MOCK_PID
    local port=$LOCAL_MOCK_PORT
    export PUSH_GATEWAY_APNS_URL_SANDBOX=https://127.0.0.1:$port
    export PUSH_GATEWAY_APNS_CA_FILE=$tls/ca.pem
    echo "apns-mock ready on 127.0.0.1:$port, recording to $record"
}

stop_apns_mock() {
    stop_local_mock "${APNS_MOCK_PID:-}"
    APNS_MOCK_PID=
}

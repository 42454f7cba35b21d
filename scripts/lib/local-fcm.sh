# Sourced by scripts/run-local: the local stand-ins for Google's services (docs/decisions/0741).

# shellcheck source=scripts/lib/local-mock.sh
source "$(dirname "${BASH_SOURCE[0]}")/local-mock.sh"

# start_fcm_mock MOCK TLS_DIR RECORD_FILE ACCOUNT_FILE starts the `fcm-mock` binary MOCK on a free
# loopback port with the certificate of TLS_DIR (scripts/lib/local-mock.sh's prepare_local_tls),
# serving the service account ACCOUNT_FILE and appending every request to RECORD_FILE, and points
# the gateway's FCM and OAuth token URLs at it (PUSH_GATEWAY_FCM_URL, PUSH_GATEWAY_GOOGLE_TOKEN_URL,
# PUSH_GATEWAY_FCM_CA_FILE). stop_fcm_mock stops it.
start_fcm_mock() {
    local mock=$1 tls=$2 record=$3 account=$4
    local state
    state=$(dirname "$record")
    start_local_mock fcm-mock "$state" "$mock" --cert-file "$tls/server.pem" --key-file "$tls/server.key" \
        --service-account "$account" --record "$record" || return 1
    FCM_MOCK_PID=$LOCAL_MOCK_PID
    local port=$LOCAL_MOCK_PORT
    export PUSH_GATEWAY_FCM_URL=https://127.0.0.1:$port
    export PUSH_GATEWAY_GOOGLE_TOKEN_URL=https://127.0.0.1:$port/token
    export PUSH_GATEWAY_FCM_CA_FILE=$tls/ca.pem
    echo "fcm-mock ready on 127.0.0.1:$port, recording to $record"
}

stop_fcm_mock() {
    stop_local_mock "${FCM_MOCK_PID:-}"
    FCM_MOCK_PID=
}

# Sourced by scripts/run-local: the local stand-ins for Google's services (docs/decisions/0741).
#
# start_fcm_mock MOCK TLS_DIR RECORD_FILE ACCOUNT_FILE starts the `fcm-mock` binary MOCK on a free
# loopback port with the certificate of TLS_DIR (scripts/lib/local-apns.sh's prepare_local_tls),
# serving the service account ACCOUNT_FILE and appending every request to RECORD_FILE, and points
# the gateway's FCM and OAuth token URLs at it (PUSH_GATEWAY_FCM_URL, PUSH_GATEWAY_GOOGLE_TOKEN_URL,
# PUSH_GATEWAY_FCM_CA_FILE). stop_fcm_mock stops it.
start_fcm_mock() {
    local mock=$1 tls=$2 record=$3 account=$4
    local state
    state=$(dirname "$record")
    : >"$state/fcm-mock.port"
    "$mock" --cert-file "$tls/server.pem" --key-file "$tls/server.key" --service-account "$account" \
        --record "$record" >"$state/fcm-mock.port" 2>"$state/fcm-mock.log" &
    FCM_MOCK_PID=$!
    # fcm-mock prints its bound port as the first line of its output.
    local attempt port=
    for attempt in $(seq 1 100); do
        port=$(head -n1 "$state/fcm-mock.port")
        [ -n "$port" ] && break
        kill -0 "$FCM_MOCK_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$port" ]; then
        echo "fcm-mock did not start:" >&2
        cat "$state/fcm-mock.log" >&2
        stop_fcm_mock
        return 1
    fi
    export PUSH_GATEWAY_FCM_URL=https://127.0.0.1:$port
    export PUSH_GATEWAY_GOOGLE_TOKEN_URL=https://127.0.0.1:$port/token
    export PUSH_GATEWAY_FCM_CA_FILE=$tls/ca.pem
    echo "fcm-mock ready on 127.0.0.1:$port, recording to $record"
}

stop_fcm_mock() {
    if [ -n "${FCM_MOCK_PID:-}" ]; then
        kill -TERM "$FCM_MOCK_PID" 2>/dev/null || true
        wait "$FCM_MOCK_PID" 2>/dev/null || true
        FCM_MOCK_PID=
    fi
    return 0
}

# Sourced by scripts/run-local: the local stand-ins for Apple's services (docs/decisions/0110).
#
# prepare_local_tls DIR creates (once) a throwaway CA and a server certificate for 127.0.0.1 and
# localhost signed by it: DIR/ca.pem, DIR/server.pem, DIR/server.key (the CA key stays in DIR too).
prepare_local_tls() {
    local dir=$1
    mkdir -p "$dir"
    chmod 700 "$dir"
    [ -s "$dir/server.pem" ] && return 0
    local curve=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    openssl req -x509 "${curve[@]}" -keyout "$dir/ca.key" -out "$dir/ca.pem" -days 3650 \
        -subj "/CN=push-gateway local development CA" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    openssl req "${curve[@]}" -keyout "$dir/server.key" -out "$dir/server.csr" -subj "/CN=localhost" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
        >"$dir/server.ext"
    # The server certificate last: its presence means the set is complete.
    openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
        -days 3650 -extfile "$dir/server.ext" -out "$dir/server.pem.tmp" 2>/dev/null
    mv "$dir/server.pem.tmp" "$dir/server.pem"
}

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
    : >"$state/apns-mock.port"
    "$mock" "${arguments[@]}" >"$state/apns-mock.port" 2>"$state/apns-mock.log" &
    APNS_MOCK_PID=$!
    # apns-mock prints its bound port as the first line of its output.
    local attempt port=
    for attempt in $(seq 1 100); do
        port=$(head -n1 "$state/apns-mock.port")
        [ -n "$port" ] && break
        kill -0 "$APNS_MOCK_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$port" ]; then
        echo "apns-mock did not start:" >&2
        cat "$state/apns-mock.log" >&2
        stop_apns_mock
        return 1
    fi
    export PUSH_GATEWAY_APNS_URL_SANDBOX=https://127.0.0.1:$port
    export PUSH_GATEWAY_APNS_CA_FILE=$tls/ca.pem
    echo "apns-mock ready on 127.0.0.1:$port, recording to $record"
}

stop_apns_mock() {
    if [ -n "${APNS_MOCK_PID:-}" ]; then
        kill -TERM "$APNS_MOCK_PID" 2>/dev/null || true
        wait "$APNS_MOCK_PID" 2>/dev/null || true
        APNS_MOCK_PID=
    fi
    return 0
}

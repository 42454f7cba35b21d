# Sourced by scripts/lib/local-apns.sh and scripts/lib/local-fcm.sh: what the local stand-ins for
# Apple's and Google's services share (docs/decisions/0110, 0741, 0781).
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

# start_local_mock NAME STATE_DIR COMMAND... starts COMMAND, a mock that prints its bound port as
# the first line of its output, in the background: that output goes to STATE_DIR/NAME.port, its
# errors to STATE_DIR/NAME.log. Sets LOCAL_MOCK_PID and LOCAL_MOCK_PORT; when no port comes within
# ten seconds (or the mock exits), prints its log, stops it and returns 1.
start_local_mock() {
    local name=$1 state=$2
    shift 2
    : >"$state/$name.port"
    "$@" >"$state/$name.port" 2>"$state/$name.log" &
    LOCAL_MOCK_PID=$!
    LOCAL_MOCK_PORT=
    local attempt
    for attempt in $(seq 1 100); do
        LOCAL_MOCK_PORT=$(head -n1 "$state/$name.port")
        [ -n "$LOCAL_MOCK_PORT" ] && return 0
        kill -0 "$LOCAL_MOCK_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "$name did not start:" >&2
    cat "$state/$name.log" >&2
    stop_local_mock "$LOCAL_MOCK_PID"
    LOCAL_MOCK_PID=
    return 1
}

# stop_local_mock PID stops the mock started as PID and waits for it; nothing when PID is empty.
stop_local_mock() {
    [ -n "${1:-}" ] || return 0
    kill -TERM "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
    return 0
}

# Sourced: start_throwaway_postgres DIR starts a private PostgreSQL cluster under DIR (socket and
# data), listening on 127.0.0.1 on the first free port from 55432, and exports DATABASE_URL
# (superuser) and PUSH_GATEWAY_TEST_PG_* for tests. stop_throwaway_postgres stops it.
# initdb and postgres refuse to run as root, so as root they run as the `postgres` user
# (created by the Debian package) from cwd /.
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)

pg_as_owner() {
    if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

start_throwaway_postgres() {
    PGDIR=$1
    mkdir -p "$PGDIR"
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PGDIR"
    if [ ! -f "$PGDIR/data/PG_VERSION" ]; then
        pg_as_owner "$PGBIN/initdb" -D "$PGDIR/data" -U postgres -A trust -E UTF8 --no-sync >"$PGDIR/initdb.log" ||
            { cat "$PGDIR/initdb.log"; return 1; }
    fi
    # A port nobody answers on may still be taken (another cluster starting, or the local end of an
    # outgoing connection: these ports lie in Linux's ephemeral range), so a start that cannot bind
    # moves on to the next port.
    local port started=
    for port in $(seq 55432 55532); do
        (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && continue
        local before
        before=0
        [ -f "$PGDIR/server.log" ] && before=$(wc -l <"$PGDIR/server.log")
        if pg_as_owner "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 60 start \
            -o "-p $port -k $PGDIR -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300" \
            >/dev/null; then
            started=1
            break
        fi
        tail -n +"$((before + 1))" "$PGDIR/server.log" | grep -q "Address already in use" || break
    done
    [ -n "$started" ] || { cat "$PGDIR/server.log"; return 1; }
    PGPORT=$port
    export PUSH_GATEWAY_TEST_PG_BIN=$PGBIN PUSH_GATEWAY_TEST_PG_DATA=$PGDIR/data PUSH_GATEWAY_TEST_PG_PORT=$PGPORT
    export DATABASE_URL="postgresql://postgres@127.0.0.1:$PGPORT/postgres"
    echo "PostgreSQL $("$PGBIN/postgres" -V | awk '{print $3}') ready on 127.0.0.1:$PGPORT"
}

stop_throwaway_postgres() {
    [ -n "${PGDIR:-}" ] && [ -d "$PGDIR/data" ] && pg_as_owner "$PGBIN/pg_ctl" -D "$PGDIR/data" -m fast stop >/dev/null 2>&1
    return 0
}

# Sourced by scripts/bench-deliveries: the pgbench side of the admission comparison. pgbench (from
# Debian's postgresql-15 package, already installed for the throwaway cluster) runs, on the same
# cluster and rows, the §4.7 admission of scripts/lib/admission.pgbench with prepared statements
# and the gateway's own admit_delivery call of scripts/lib/admit-delivery.pgbench, prepared and as
# an unnamed statement, parsed and planned per call (the gateway's form before decision 0300), and for the batch comparison the
# admit_delivery_batch call of scripts/lib/admit-delivery-batch.pgbench (100 items per call); the
# CPU of pgbench and of PostgreSQL is counted per admission (per item for the batch).
PGBENCH_INSTALLATIONS=1000

# CPU seconds of the cluster so far: the postmaster, the backends it has reaped (cutime/cstime)
# and the ones still running (proc(5) fields 14-17).
postgres_cpu_seconds() {
    local postmaster ticks=0 pid fields
    postmaster=$(head -n 1 "$PGDIR/data/postmaster.pid")
    read -r -a fields <<<"$(sed 's/^.*) //' "/proc/$postmaster/stat")"
    ticks=$((fields[11] + fields[12] + fields[13] + fields[14]))
    for pid in $(ps -o pid= --ppid "$postmaster"); do
        read -r -a fields <<<"$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null)" || continue
        [ ${#fields[@]} -gt 12 ] && ticks=$((ticks + fields[11] + fields[12]))
    done
    awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", t / hz }'
}

# Waits (at most 5 s) until the cluster has no more child processes than `$1`: the backends of a
# finished pgbench run have exited and been reaped, so their CPU is in the postmaster's cutime.
await_backends_reaped() {
    local postmaster
    postmaster=$(head -n 1 "$PGDIR/data/postmaster.pid")
    for _ in $(seq 100); do
        [ "$(ps -o pid= --ppid "$postmaster" | wc -l)" -le "$1" ] && return 0
        sleep 0.05
    done
}

# Installations md5('i' || n) with delegations md5('d' || n) to one relay, n = 1..N (as admin).
prepare_pgbench_rows() {
    "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$1" <<SQL
INSERT INTO installations (handle, app_attest_key_id, app_attest_public_key, app_profile,
    encrypted_endpoint, endpoint_fingerprint, endpoint_epoch, expires_at)
SELECT md5('i' || n)::uuid, sha256(('k' || n)::bytea), '\x04'::bytea || sha256(('x' || n)::bytea) || sha256(('y' || n)::bytea),
    'pgbench', convert_to('k1.' || md5('t' || n), 'UTF8'), sha256(('f' || n)::bytea), 1, now() + interval '1 day'
FROM generate_series(1, $PGBENCH_INSTALLATIONS) AS n;
INSERT INTO delegations (installation_handle, relay_pubkey, delegation_id, generation, endpoint_epoch, not_before, expires_at)
SELECT md5('i' || n)::uuid, sha256('relay'::bytea), md5('d' || n)::uuid, 1, 1, now() - interval '1 minute', now() + interval '1 day'
FROM generate_series(1, $PGBENCH_INSTALLATIONS) AS n;
SQL
}

# One pgbench run per concurrency and script; prints a markdown table row per run, the §4.7
# transaction's row first and the function call's rows beside it (a fourth argument `batch` runs
# the §4.7 transaction and the batch function instead, at most 10 connections: each takes its own
# blocks of 100 installations).
run_pgbench_side() {
    local url=$1 seconds=$2 concurrency run script mode items label children before_pg after_pg output admissions rate
    local pgbench_cpu runs=("admission prepared 1 §4.7 transaction")
    if [ "${4:-}" = batch ]; then
        runs+=("admit-delivery-batch extended 100 admit_delivery_batch, 100 items, unnamed (per item)")
    else
        runs+=("admit-delivery prepared 1 admit_delivery" "admit-delivery extended 1 admit_delivery, unnamed")
    fi
    echo "| connections | admission | pgbench admissions/s | PostgreSQL CPU per admission | pgbench CPU per admission |"
    echo "|---|---|---|---|---|"
    for concurrency in ${3//,/ }; do
        for run in "${runs[@]}"; do
            read -r script mode items label <<<"$run"
            children=$(ps -o pid= --ppid "$(head -n 1 "$PGDIR/data/postmaster.pid")" | wc -l)
            before_pg=$(postgres_cpu_seconds)
            # `times` reports the CPU of the subshell's finished children: pgbench alone.
            output=$( (PGOPTIONS= "$PGBIN/pgbench" -n -M "$mode" -c "$concurrency" -j "$concurrency" -T "$seconds" \
                -D installations=$PGBENCH_INSTALLATIONS -D clients="$concurrency" -f "scripts/lib/$script.pgbench" "$url" 2>&1
                times) )
            await_backends_reaped "$children"
            after_pg=$(postgres_cpu_seconds)
            admissions=$(awk -v k="$items" '/number of transactions actually processed/ { split($0, a, ": "); split(a[2], b, "/"); print b[1] * k }' <<<"$output")
            rate=$(awk -v k="$items" '/^tps = / { printf "%.0f", $3 * k }' <<<"$output")
            pgbench_cpu=$(tail -n 1 <<<"$output" | awk '{ split($1, u, "m"); split($2, s, "m"); sub("s", "", u[2]); sub("s", "", s[2]); printf "%.3f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
            awk -v c="$concurrency" -v l="$label" -v r="$rate" -v n="$admissions" \
                -v pg="$(awk -v a="$after_pg" -v b="$before_pg" 'BEGIN { print a - b }')" -v pb="$pgbench_cpu" \
                'BEGIN { printf "| %d | %s | %s | %.0f µs | %.0f µs |\n", c, l, r, pg / n * 1e6, pb / n * 1e6 }'
        done
    done
}

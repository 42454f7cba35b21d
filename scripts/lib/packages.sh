# Sourced by scripts/test and scripts/run-local: installs the Debian packages the build, the tests
# and the local run need, skipping apt entirely when they are all present already.
DEBIAN_PACKAGES=(
    pkg-config libpq-dev libssl-dev libcurl4-openssl-dev libnghttp2-dev libsecp256k1-dev
    postgresql curl ca-certificates openssl nginx-light
    # Prometheus and promtool: the rules, dashboard and exposition tests run the real thing.
    prometheus
    # The HTTP CONNECT proxy between the APNs client and apns-mock (APNsProxyTests).
    tinyproxy
    # §12: the pgbouncer tests run serve through a transaction-mode pooler.
    pgbouncer
    # scripts/check-image: the Debian bookworm root file systems the image's stages start from.
    debootstrap
    # Swift's own runtime dependencies on a bare Debian image.
    libncurses6 libsqlite3-0 binutils libc6-dev libgcc-12-dev
)

# Extra package names given as arguments are installed too (the benchmarks add wrk).
install_debian_packages() {
    local missing=()
    local package
    for package in "${DEBIAN_PACKAGES[@]}" "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing Debian packages: ${missing[*]}"
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

export PATH=/opt/swift/usr/bin:$PATH

# Python packages the tests use as independent implementations (Tests/requirements.txt), installed
# with pip; on a Debian python without pip, pip comes from python3-pip first.
install_python_packages() {
    python3 -c 'import cbor2, coincurve, cryptography, h11, helm_python, http_ece, httptools, kubernetes_validate, nostr_sdk, openapi_spec_validator, pyasn1, schemathesis, websockets, yaml' 2>/dev/null && return 0
    python3 -m pip --version >/dev/null 2>&1 || install_debian_packages python3-pip
    python3 -m pip install --quiet --disable-pip-version-check -r Tests/requirements.txt 2>/dev/null ||
        python3 -m pip install --quiet --disable-pip-version-check --break-system-packages -r Tests/requirements.txt
}

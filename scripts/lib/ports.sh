# Sourced: free_loopback_ports N prints, on one line, N distinct loopback TCP ports that were free a
# moment ago (bound all at once so none repeats, then released).
free_loopback_ports() {
    python3 - "$1" <<'PY'
import socket, sys
sockets = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in sockets))
PY
}

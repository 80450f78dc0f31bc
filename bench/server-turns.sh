# Sourced by the benches that load servers in turn (bench/frontend-ab.sh, bench/client-features-load.sh):
# WORK, a temporary directory removed on exit (with the server still running, if any); `start COMMAND…` runs
# a server that prints `listening on ADDR` and sets ADDRESS and PID; `stop` stops it.
WORK=$(mktemp -d)
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"' EXIT

start() {
  "$@" > "$WORK/log" 2>/dev/null &
  PID=$!
  for _ in $(seq 100); do grep -q '^listening on ' "$WORK/log" && break; sleep 0.1; done
  ADDRESS=$(sed -n 's/^listening on //p' "$WORK/log" | head -1)
}

stop() { kill "$PID"; wait "$PID" 2>/dev/null || true; PID=; }

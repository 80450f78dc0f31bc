#!/usr/bin/env bash
# Load test of GET /api/client/features (what every server SDK and downstream edge polls): one or more
# vexil-edge binaries take turns in offline mode on a generated document of FLAGS flags, each asked plain and
# with a browser's Accept-Encoding (zstd), each round ending with the fixed-body server on the plain and the
# zstd answer (the ceiling). Prints "binary coding req/s" per run. ROUTE=/api/client/delta loads a new delta
# client's hydration instead (no If-None-Match).
# Usage: [FLAGS=200] [DURATION=8] [ROUNDS=3] [ROUTE=…] bench/client-features-load.sh EDGE_BINARY…
#   (after cargo build --release -p vexil-bench --bins; needs wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 EDGE_BINARY…" >&2; exit 2; }
source bench/server-turns.sh
TOKEN=default:development.bench-client
ACCEPT="gzip, deflate, br, zstd"
bench/generate_features.py "${FLAGS:-200}" > "$WORK/features.json"

load() { wrk -t2 -c32 -d"${DURATION:-8}s" "$@" | awk '/Requests\/sec/ {print $2}'; }

echo "$(date -u +%H:%M) load $(cut -d' ' -f1-3 /proc/loadavg), ${FLAGS:-200} flags"
for _ in $(seq "${ROUNDS:-3}"); do
  for edge in "$@"; do
    start "$edge" offline --listen 127.0.0.1:0 --features "$WORK/features.json" --client-tokens "$TOKEN"
    url="http://$ADDRESS${ROUTE:-/api/client/features}"
    curl -s -H "Authorization: $TOKEN" "$url" > "$WORK/plain.json"
    curl -s -H "Authorization: $TOKEN" -H "Accept-Encoding: $ACCEPT" "$url" > "$WORK/zstd.json"
    echo "$edge plain $(load -H "Authorization: $TOKEN" "$url")"
    echo "$edge zstd $(load -H "Authorization: $TOKEN" -H "Accept-Encoding: $ACCEPT" "$url")"
    stop
  done
  for coding in plain zstd; do
    start target/release/fixed-body-server "$WORK/$coding.json"
    echo "fixed-body $coding $(load "http://$ADDRESS/api/frontend") ($(stat -c %s "$WORK/$coding.json") bytes)"
    stop
  done
done
echo "$(date -u +%H:%M) load $(cut -d' ' -f1-3 /proc/loadavg)"

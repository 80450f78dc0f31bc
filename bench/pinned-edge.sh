# Sourced by the CPU-per-request benches (bench/cpu-per-request.sh, bench/compression-cost.sh): a release
# `vexil-edge offline` over a bench/generate_features.py document of FLAGS flags, on CPU 0 with wrk on CPU 1
# when the machine has two CPUs or more (PIN=0: both anywhere), so that the load generator's own work
# neither takes the edge's CPU nor its caches; and the CPU time it spends per request of a wrk run.
# Sets WORK (a temporary directory, removed on exit), PID, EDGE (host:port), WRK_CPU; defines
# `cpu_round LABEL ROUND SCRIPT` and `median`. Reads EDGE_BIN (default target/release/vexil-edge).
EDGE_CPU=(); WRK_CPU=()
if [ "${PIN:-1}" != 0 ] && [ "$(nproc)" -ge 2 ]; then
  EDGE_CPU=(taskset -c 0); WRK_CPU=(taskset -c 1)
fi
WORK=$(mktemp -d)
bench/generate_features.py "$FLAGS" > "$WORK/f.json"
"${EDGE_CPU[@]}" "${EDGE_BIN:-target/release/vexil-edge}" offline --listen 127.0.0.1:0 --features "$WORK/f.json" \
  --frontend-tokens default:development.bench-frontend > "$WORK/edge.log" 2>&1 &
PID=$!
trap 'kill $PID; rm -rf $WORK' EXIT
sleep 1
EDGE=$(sed -n 's/^listening on //p' "$WORK/edge.log" | head -1)
HZ=$(getconf CLK_TCK)
echo "$FLAGS flags, ${EDGE_CPU[*]:-unpinned} edge, ${WRK_CPU[*]:-unpinned} wrk, load $(cut -d' ' -f1-3 /proc/loadavg)"

ticks() { awk '{print $14+$15}' "/proc/$PID/stat"; }

# The edge's user + system time per request over `wrk -t1 -c16` for DURATION seconds with bench/SCRIPT.lua
# (the environment passed on to wrk's script); prints the round and appends "ROUND LABEL µs" to $WORK/rounds.
cpu_round() {
  local label=$1 round=$2 script=$3 a b req us
  a=$(ticks)
  req=$("${WRK_CPU[@]}" wrk -t1 -c16 -d"${DURATION}s" -s "bench/$script.lua" "http://$EDGE" | awk '/requests in/{print $1}')
  b=$(ticks)
  us=$(awk -v t=$((b-a)) -v hz="$HZ" -v n="$req" 'BEGIN { printf "%.2f", t * 1e6 / hz / n }')
  echo "$FLAGS $label round $round: $req requests, $us us CPU per request"
  echo "$round $label $us" >> "$WORK/rounds"
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2)}'; }

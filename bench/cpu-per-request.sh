#!/usr/bin/env bash
# CPU time (user + system, from /proc/PID/stat) a release `vexil-edge offline` spends per request, for
# GET /api/frontend (bench/frontend.lua) and POST /ofrep/v1/evaluate/flags (bench/ofrep.lua), alternating, over
# bench/generate_features.py documents. Steadier than req/s on a shared machine: other load slows the
# requests, not the CPU each one costs. On a machine of two CPUs or more the edge runs on CPU 0 and wrk on
# CPU 1 (PIN=0: both anywhere; bench/pinned-edge.sh), so that the load generator's own work (OFREP's bodies
# and longer answers cost wrk more) neither takes the edge's CPU nor its caches. Ends with the medians and the median of the rounds'
# OFREP/frontend ratios. Needs wrk and `cargo build --release -p vexil-edge --bins`.
# Usage: [EDGE_BIN=path] [PIN=0] bench/cpu-per-request.sh FLAGS [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
FLAGS=$1; ROUNDS=${2:-3}; DURATION=${3:-5}
. bench/pinned-edge.sh
for r in $(seq "$ROUNDS"); do
  for s in frontend ofrep; do cpu_round "$s" "$r" "$s"; done
done
fe=$(awk '$2 == "frontend" {print $3}' "$WORK/rounds" | median)
of=$(awk '$2 == "ofrep" {print $3}' "$WORK/rounds" | median)
ratio=$(awk '$2 == "frontend" {f[$1]=$3} $2 == "ofrep" {print $3 / f[$1]}' "$WORK/rounds" | median)
echo "$FLAGS flags: medians frontend $fe us, ofrep $of us; OFREP/frontend median of the rounds' ratios $(printf '%.3f' "$ratio"), load $(cut -d' ' -f1-3 /proc/loadavg)"

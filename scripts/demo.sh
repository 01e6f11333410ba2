#!/usr/bin/env bash
# make demo: build coopcc, run the embedded default scenario (10 terminals,
# 802.11g, 256 ms wired delay; cubic, hayakawa2016, coop, bbr), write its
# report, print the summary table and where the report is. Needs root
# (network namespaces, TAPs, BPF) and iperf3 (`make deps`).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root (network namespaces, TAP devices, BPF); re-running with sudo" >&2
	exec sudo -E env "PATH=$PATH" "$0" "$@"
fi

BIN=bin/coopcc
go build -buildvcs=auto -o "$BIN" ./cmd/coopcc
OUT=${OUT:-results/demo-$(date +%Y%m%d-%H%M%S)}
SCENARIO=${SCENARIO:-default}

"$BIN" lab clean >/dev/null 2>&1 || true
start=$(date +%s)
"$BIN" lab run "$SCENARIO" --out "$OUT" ${QUICK:+--quick}
ran=$(( $(date +%s) - start ))

echo
# Prints the summary table (per mode: aggregate, Jain, p95 RTT, ...) and the report's path.
"$BIN" lab report "$OUT"
echo "runs took ${ran}s; results in $OUT"

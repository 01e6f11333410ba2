#!/bin/bash
# Usage: experiments/physical-limit/run.sh [-s SCENARIO] OUT [WINDOWS...]
# Runs SCENARIO (default static.toml beside this script: 10 terminals at
# 256 ms; alone.toml: one terminal at 4 ms) once per window (default 40 48 56
# 64 80 120 200) into OUT/w<W>, then prints each run's aggregate, Jain and
# p95 RTT. Needs root and bin/coopcc (make build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scenario=$here/static.toml
if [ "${1:-}" = "-s" ]; then
	scenario=${2:?usage: $0 [-s SCENARIO] OUT [WINDOWS...]}
	shift 2
fi
[ -f "$scenario" ] || { echo "$0: no scenario file $scenario" >&2; exit 2; }
out=${1:?usage: $0 [-s SCENARIO] OUT [WINDOWS...]}
shift
windows=("$@")
[ ${#windows[@]} -gt 0 ] || windows=(40 48 56 64 80 120 200)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
for w in "${windows[@]}"; do
	sed "s/^static_hi = .*/static_hi = $w/" "$scenario" >"$tmp/w$w.toml"
	bin/coopcc lab run "$tmp/w$w.toml" --wait --out "$out/w$w"
done
for w in "${windows[@]}"; do
	bin/coopcc lab report "$out/w$w" >/dev/null
	printf 'W=%s\t' "$w"
	tail -n +2 "$out/w$w/report/summary.txt" | head -1
done

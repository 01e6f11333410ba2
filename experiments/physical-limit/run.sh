#!/bin/bash
# Usage: experiments/physical-limit/run.sh OUT [WINDOWS...]
# Runs static.toml once per window (default 40 48 56 64 80 120 200) into
# OUT/w<W>, then prints each run's aggregate, Jain and p95 RTT. Needs root and
# bin/coopcc (make build).
set -euo pipefail
out=${1:?usage: $0 OUT [WINDOWS...]}
shift
windows=("$@")
[ ${#windows[@]} -gt 0 ] || windows=(40 48 56 64 80 120 200)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
for w in "${windows[@]}"; do
	sed "s/^static_hi = .*/static_hi = $w/" "$here/static.toml" >"$tmp/w$w.toml"
	bin/coopcc lab run "$tmp/w$w.toml" --wait --out "$out/w$w"
done
for w in "${windows[@]}"; do
	bin/coopcc lab report "$out/w$w" >/dev/null
	printf 'W=%s\t' "$w"
	tail -n +2 "$out/w$w/report/summary.txt" | head -1
done

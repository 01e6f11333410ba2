#!/bin/sh
# One lab run with a trace of its receivers' ACK state (docs/datapath.md,
# "Raising a bound"): starts the run, waits WAIT seconds into it, records
# every bulk receiver's state for SECONDS, then summarises. Root; needs clang
# (`make deps-bpf`) and a built bin/coopcc (`make build`).
# Usage: experiments/acktrace/run.sh SCENARIO ONLY OUTDIR [WAIT] [SECONDS]
#   e.g. experiments/acktrace/run.sh downloads 'mode=coop,n=10,delay=256ms' /tmp/acks
set -eu
cd "$(dirname "$0")/../.."
scenario=$1 only=$2 out=$3 wait=${4:-12} secs=${5:-12}
mkdir -p "$out"
clang -O2 -g -target bpf -D__TARGET_ARCH_x86 -Ibpf -c experiments/acktrace/bpf/acktrace.c -o "$out/acktrace.o"
go build -o "$out/acktrace" ./experiments/acktrace
bin/coopcc lab run "$scenario" --quick --only "$only" --out "$out/lab" --wait >"$out/lab.log" 2>&1 &
lab=$!
# The run has started once the runner prints its first run line.
until grep -q '^\[1/' "$out/lab.log" 2>/dev/null; do sleep 1; done
sleep "$wait"
"$out/acktrace" "$out/acktrace.o" "${secs}s" >"$out/trace.csv"
wait "$lab"
grep 'done in' "$out/lab.log" || true
python3 experiments/acktrace/summary.py "$out/trace.csv"

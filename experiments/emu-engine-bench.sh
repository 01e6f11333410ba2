#!/bin/sh
# Interleaved comparison of the emulator's real-time engines through TAPs
# (docs/performance.md, "Emulator"): for every repetition and offered rate,
# the inline engine (writes on the timing thread) and the threaded engine run
# back to back. Root. Usage: experiments/emu-engine-bench.sh [REPS] > out.md
set -eu
cd "$(dirname "$0")/.."
reps=${1:-3}
bin=bin/coopcc
point() { # engine phy stations frame pps
	timeout -s KILL 60 "$bin" emu bench --tap --engine "$1" --phy "$2" --stations "$3" --frame "$4" --pps "$5" --duration 3s 2>/dev/null | tail -1
}
echo "| engine | PHY | stations | frame B | offered pps | delivered pps | events/s | p50 µs | p99 µs | max µs | delivery p99 µs | p99 < 100 µs | cores: emulator | loop | writers | helpers | verdict |"
echo "|--|--|--|--|--|--|--|--|--|--|--|--|--|--|--|--|--|"
for r in $(seq "$reps"); do
	for p in "g 10 1514 1000" "g 10 1514 2000" "g 10 1514 2500" "g 10 200 4000" "g 10 200 6000" "g 10 200 8000" \
		"ac 4 1514 5000" "ac 4 1514 10000" "ac 4 1514 20000" "ac 4 1514 30000"; do
		for e in inline threaded; do
			# shellcheck disable=SC2086
			point "$e" $p
		done
	done
done

#!/bin/sh
# Soak test (issue: an agent an operator can trust over hours): runs
# experiments/soak/soak.toml for MINUTES (default 60) and samples, every
# EVERY seconds, the coopcc agents' resident memory, open file descriptors
# and threads and the BPF programs, maps and links they hold (their
# descriptors, /proc/PID/fd), into OUT/soak.csv; at the end it compares the last third of the
# samples with the first third (medians) and fails when any grew by more than 10 %
# (memory) or at all (descriptors, threads, BPF objects beyond the first
# sample's). Needs root and iperf3 (make deps).
#
#   experiments/soak/soak.sh [MINUTES] [OUT]      (make soak)
#
# BACKEND=emu (default) runs it through the WLAN emulator (a run the emulator
# marks invalid on a busy machine still counts: resources are the point);
# BACKEND=veth runs it over a plain bridge at line rate (heavy on the CPU).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
minutes=${1:-60}
out=${2:-$root/results/soak-$(date +%Y%m%d-%H%M%S)}
every=${EVERY:-30}
backend=${BACKEND:-emu}
coopcc=${COOPCC:-$root/bin/coopcc}
[ -x "$coopcc" ] || { echo "soak: $coopcc missing (make build)" >&2; exit 2; }
mkdir -p "$out"
csv=$out/soak.csv
echo "t_s,agents,rss_kb,fds,threads,bpf_progs,bpf_maps,bpf_links" > "$csv"

"$coopcc" lab run "$here/soak.toml" --backend "$backend" --duration "${minutes}m" --wait --out "$out/lab" > "$out/lab.log" 2>&1 &
lab=$!
trap 'kill $lab 2>/dev/null || true' INT TERM

# agents lists the `coopcc agent` processes started by this lab run (its
# descendants), not those of anything else on the machine.
agents() {
	ps -eo pid=,ppid=,args= | awk -v root=$lab '
		{ parent[$1] = $2; cmd[$1] = $0 }
		END {
			for (p in parent) {
				q = p
				while (q != "" && q != 1 && q != root) q = parent[q]
				if (q == root && cmd[p] ~ /coopcc agent/) print p
			}
		}'
}

sample() {
	pids=$(agents)
	n=0 rss=0 fds=0 thr=0 progs=0 maps=0 links=0
	for p in $pids; do
		[ -r /proc/$p/status ] || continue
		n=$((n + 1))
		rss=$((rss + $(awk '/^VmRSS:/ {print $2}' /proc/$p/status)))
		thr=$((thr + $(awk '/^Threads:/ {print $2}' /proc/$p/status)))
		targets=$(ls -l /proc/$p/fd 2>/dev/null | awk '{print $NF}')
		fds=$((fds + $(echo "$targets" | grep -c . || true)))
		progs=$((progs + $(echo "$targets" | grep -c 'bpf-prog' || true)))
		maps=$((maps + $(echo "$targets" | grep -c 'bpf-map' || true)))
		links=$((links + $(echo "$targets" | grep -c 'bpf_link' || true)))
	done
	echo "$1,$n,$rss,$fds,$thr,$progs,$maps,$links" >> "$csv"
}

start=$(date +%s)
while kill -0 $lab 2>/dev/null; do
	sleep "$every"
	sample $(( $(date +%s) - start ))
done
wait $lab || { echo "soak: lab run failed (see $out/lab.log)" >&2; exit 1; }

# Only samples with all ten agents up count (start-up and tear-down excluded).
python3 - "$csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if int(r["agents"]) == 10]
if len(rows) < 6:
    sys.exit("soak: fewer than 6 samples with 10 agents; run longer")
third = len(rows) // 3
first, last = rows[:third], rows[-third:]
# Medians of the thirds: a descriptor open for one sample (a status query,
# the monitor's netlink socket) is not a leak; a leak moves the median.
def median(rs, k):
    xs = sorted(float(r[k]) for r in rs)
    return xs[len(xs) // 2]
bad = []
for k, slack in (("rss_kb", 0.10), ("fds", 0), ("threads", 0.10), ("bpf_progs", 0), ("bpf_maps", 0), ("bpf_links", 0)):
    a, b = median(first, k), median(last, k)
    grew = (b - a) / a if a else 0
    print(f"{k:10s} first third {a:10.1f}  last third {b:10.1f}  change {grew:+.1%}")
    if grew > slack:
        bad.append(k)
print(f"{len(rows)} samples with 10 agents over {rows[-1]['t_s']} s")
sys.exit(f"soak: grew: {', '.join(bad)}" if bad else 0)
PY

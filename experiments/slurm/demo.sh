#!/usr/bin/env bash
# demo.sh [WORKDIR]: a sharded sweep through a real Slurm on this one machine.
#
# Starts munged, slurmctld and slurmd (configuration from mkconf.sh, every
# file under WORKDIR, default a new directory under ${TMPDIR:-/tmp}), submits
# lab-shards.sbatch as a job array of 4 tasks over the 4 --quick runs of
# tiny4.toml (each task runs `coopcc lab run --shard K/4 --wait`, queueing on
# the lab lock), merges the 4 shard directories with `coopcc lab report`,
# checks that the merged report holds every run id of the scenario exactly
# once, and shows that the merge refuses a shard of another scenario and a
# shard run by another coopcc binary. The daemons are stopped (and any job
# left is cancelled) on exit, whatever happened. Results stay in WORKDIR.
#
# Needs root (the lab), slurm-wlm and munge (`make deps-slurm`), iperf3 and
# Go (`make deps build`). Run it as `make slurm-demo` or directly.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
here=$repo/experiments/slurm
bin=$repo/bin/coopcc
scenario=$here/tiny4.toml
shards=4

# log prints a step heading.
log() { printf '\n== %s\n' "$*"; }

# die prints a message and exits non-zero (the trap still cleans up).
die() {
	echo "demo: $*" >&2
	exit 1
}

# free_port prints the first TCP port from $1 up that nothing listens on.
free_port() {
	local p=$1
	while ss -Hltn "sport = :$p" | grep -q .; do p=$((p + 1)); done
	echo "$p"
}

# preflight checks what the demo needs and builds coopcc if it is missing.
preflight() {
	[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces for the lab, Slurm daemons)"
	local c
	for c in munged slurmctld slurmd sbatch squeue scontrol; do
		command -v "$c" >/dev/null || die "$c not found: run 'make deps-slurm' (scripts/install-deps.sh --slurm)"
	done
	command -v go >/dev/null || die "go not found (the demo builds a second coopcc binary)"
	[[ -x $bin ]] || make -C "$repo" build
}

# start_daemons starts munged, slurmctld and slurmd in the foreground of
# background jobs, their pids in pids[], and waits for the node to be idle.
start_daemons() {
	local ctld_port slurmd_port i
	ctld_port=$(free_port 6817)
	slurmd_port=$(free_port $((ctld_port + 1)))
	export SLURM_CONF
	SLURM_CONF=$("$here/mkconf.sh" "$slurm" "$ctld_port" "$slurmd_port")
	mkdir -p "$slurm/munge"
	chmod 755 "$work" "$slurm" "$slurm/munge" # munged wants its socket reachable by all
	head -c 1024 /dev/urandom >"$slurm/munge/munge.key"
	chmod 400 "$slurm/munge/munge.key"
	munged --foreground --key-file="$slurm/munge/munge.key" --socket="$slurm/munge/munge.socket" \
		--pid-file="$slurm/munge/munged.pid" --seed-file="$slurm/munge/munged.seed" \
		--log-file="$slurm/munge/munged.log" 2>>"$slurm/munge/munged.out" &
	pids+=($!)
	for i in $(seq 50); do [[ -S $slurm/munge/munge.socket ]] && break; sleep 0.1; done
	slurmctld -D -f "$SLURM_CONF" >>"$slurm/log/slurmctld.out" 2>&1 &
	pids+=($!)
	slurmd -D -f "$SLURM_CONF" -N "$(hostname -s)" >>"$slurm/log/slurmd.out" 2>&1 &
	pids+=($!)
	for i in $(seq 60); do
		[[ $(sinfo -h -o %t 2>/dev/null) == idle ]] && break
		sleep 1
	done
	echo "slurm.conf: $SLURM_CONF (controller port $ctld_port, slurmd port $slurmd_port)"
	sinfo
	[[ $(sinfo -h -o %t) == idle ]] || die "the node did not come up idle; see $slurm/log"
}

# cleanup cancels what is left of the demo's jobs and stops the daemons.
cleanup() {
	local rc=$? p
	if [[ -n ${job:-} ]] && squeue -h -j "$job" 2>/dev/null | grep -q .; then
		echo "demo: cancelling job $job" >&2
		scancel "$job" || true
		for _ in $(seq 30); do squeue -h -j "$job" 2>/dev/null | grep -q . || break; sleep 1; done
	fi
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		p=${pids[i]}
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
	done
	echo "daemons stopped; results and logs in $work"
	exit "$rc"
}

# wait_job polls the job array until no task is pending or running.
wait_job() {
	local last="" now
	while now=$(squeue -h -j "$1" -o '%i %T' 2>/dev/null | sort | tr '\n' ' ') && [[ -n $now ]]; do
		[[ $now == "$last" ]] || echo "$(date +%T) $now"
		last=$now
		sleep 5
	done
}

# field prints the value of " NAME=" in a one-line scontrol record.
field() { grep -o " $1=[^ ]*" <<<"$2" | head -n 1 | cut -d= -f2-; }

# check_tasks prints every array task's state, exit code, run time and node,
# and fails unless all completed with exit code 0.
check_tasks() {
	local line k ok=0
	for k in $(seq "$shards"); do
		line=$(scontrol -o show job "${1}_$k")
		printf 'task %s: %s, exit code %s, run time %s, node %s\n' "$(field ArrayTaskId "$line")" \
			"$(field JobState "$line")" "$(field ExitCode "$line")" "$(field RunTime "$line")" "$(field NodeList "$line")"
		[[ $(field JobState "$line") == COMPLETED && $(field ExitCode "$line") == 0:0 ]] && ok=$((ok + 1))
	done
	((ok == shards)) || die "$ok of $shards tasks completed with exit code 0; see $work/slurm-$1_*.out"
}

# report_ids prints the run ids of a report's runs.csv, one per run.
report_ids() {
	grep -F ',*,' "$1/runs.csv" | grep -o '^"[^"]*"' | tr -d '"'
}

# expect_refusal runs `coopcc lab report` on the given directories, shows
# its message and fails unless it refused them with text matching $1.
expect_refusal() {
	local want=$1 msg
	shift
	if msg=$("$bin" lab report "$@" --out "$work/refused-report" 2>&1); then
		die "the merge of $* was accepted"
	fi
	echo "$msg"
	grep -q "$want" <<<"$msg" || die "the refusal does not say \"$want\""
	echo "-> refused, as it should be"
}

work=${1:-$(mktemp -d "${TMPDIR:-/tmp}/coopcc-slurm-demo.XXXXXX")}
mkdir -p "$work"
work=$(cd "$work" && pwd)
slurm=$work/slurm
out=$work/results
pids=()
job=""
trap cleanup EXIT
trap 'exit 130' INT TERM

preflight
log "Slurm on $(hostname -s): $(nproc) CPUs, $(slurmd -V)"
start_daemons

log "the scenario: $scenario --quick"
"$bin" lab run "$scenario" --quick --dry-run
mapfile -t want < <("$bin" lab run "$scenario" --quick --dry-run | grep $'\t' | cut -f1 | sort)

log "sbatch --array=1-$shards experiments/slurm/lab-shards.sbatch"
job=$(cd "$work" && OUT=$out SCENARIO=$scenario QUICK=1 COOPCC=$bin \
	sbatch --parsable --array=1-"$shards" --time=60 --output="$work/slurm-%A_%a.out" \
	"$here/lab-shards.sbatch")
echo "submitted job array $job"
wait_job "$job"
check_tasks "$job"
for k in $(seq "$shards"); do
	echo "shard-$k-of-$shards: $(ls "$out/shard-$k-of-$shards/runs" | tr '\n' ' ')"
done

log "coopcc lab report (merge of the $shards shards)"
"$bin" lab report "$out"/shard-*-of-"$shards" --out "$out/report"
mapfile -t got < <(report_ids "$out/report" | sort)
echo "run ids in the merged report (runs.csv):"
printf '  %s\n' "${got[@]}"
[[ -z $(printf '%s\n' "${got[@]}" | uniq -d) ]] || die "a run id appears twice in the merged report"
[[ "${got[*]}" == "${want[*]}" ]] || die "the merged report's run ids differ from the scenario's"
echo "-> ${#got[@]} run ids, each once, = the scenario's ${#want[@]} runs (lab run --dry-run)"

log "a shard of another scenario (the tiny preset) is refused"
"$bin" lab run tiny --quick --shard 1/2 --wait --out "$work/other-scenario" 2>&1 | tail -n 2
expect_refusal "scenario file" "$out"/shard-*-of-"$shards" "$work/other-scenario"

log "a shard run by another coopcc binary (same source, stripped: go build -ldflags=-s) is refused"
(cd "$repo" && go build -ldflags=-s -o "$work/coopcc-stripped" ./cmd/coopcc)
"$work/coopcc-stripped" lab run "$scenario" --quick --shard 1/"$shards" --wait --out "$work/other-binary" 2>&1 | tail -n 2
mapfile -t rest < <(for k in $(seq 2 "$shards"); do echo "$out/shard-$k-of-$shards"; done)
expect_refusal "coopcc binary" "${rest[@]}" "$work/other-binary"

log "done: merged report in $out/report/report.html"

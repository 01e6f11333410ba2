#!/usr/bin/env bash
# shellcheck disable=SC2015 # ok never fails: `test && ok … || fail …` is an if-then-else here
# Starts the shipped unit (deploy/systemd/coopcc-agent.service) under a real
# systemd: a minimal Debian tree made with debootstrap is booted with
# systemd-nspawn (systemd as PID 1 of the container, a private network
# namespace), with bin/coopcc, the unit and a configuration installed inside.
# Checks, each one printed as "ok ..." or "FAIL ...":
#   systemd-analyze verify of the unit; it starts at boot (enabled, Type=notify:
#   active only after READY=1); the hardening really applies to the process
#   (capabilities, no_new_privs, seccomp, read-only /usr, private /tmp);
#   systemctl reload re-reads the file; systemctl kill -s KILL → Restart=on-failure
#   restarts it and the new agent adopts what the dead one left (state file in
#   /run/coopcc, its BPF programs freed); systemctl stop frees every BPF program
#   of both agents and restores the namespace's original default congestion
#   control (set to bbr before the agent starts, so a fallback to reno shows).
# Usage (root, from a clone; needs Go, Debian's mirror):
#   deploy/systemd/test-nspawn.sh            # or: make test-systemd
# Environment:
#   COOPCC_BIN=FILE              the binary to install; default: ./cmd/coopcc built
#                                here with CGO_ENABLED=0 (static, so that it runs
#                                whatever the host's glibc is against the tree's)
#   COOPCC_NSPAWN_CACHE=FILE     reuse a tarball of the Debian tree (made on the
#                                first run if FILE does not exist); default: none,
#                                debootstrap every time (~5 min on 2 cores)
#   COOPCC_NSPAWN_MIRROR=URL     Debian mirror (default http://deb.debian.org/debian)
#   COOPCC_NSPAWN_SUITE=bookworm
#   COOPCC_NSPAWN_KEEP=1         keep the work directory (for debugging)
# The container, its rootfs and the cgroups nspawn created are removed on every
# exit path (trap). Every step has its own time limit; the whole run is bounded
# by their sum (about 35 min at most with debootstrap, 10 min with the cache).
# Heavy steps run under nice -n 19.
set -euo pipefail

cd "$(dirname "$0")/../.."
BIN=${COOPCC_BIN:-}
UNIT=deploy/systemd/coopcc-agent.service
CONF=deploy/coopcc.toml.example
MIRROR=${COOPCC_NSPAWN_MIRROR:-http://deb.debian.org/debian}
SUITE=${COOPCC_NSPAWN_SUITE:-bookworm}
CACHE=${COOPCC_NSPAWN_CACHE:-}
MACHINE=coopcc-nspawn-$$

log() { printf '%s %s\n' "$(date +%T)" "$*"; }
fails=0
ok() { printf 'ok   %s\n' "$*"; }
fail() {
	printf 'FAIL %s\n' "$*"
	fails=$((fails + 1))
}
die() {
	printf 'test-nspawn: %s\n' "$*" >&2
	exit 1
}

[[ $(id -u) -eq 0 ]] || die "needs root (debootstrap, systemd-nspawn, BPF)"
for c in systemd-nspawn debootstrap nsenter bpftool; do
	command -v "$c" >/dev/null || die "$c missing: scripts/install-deps.sh --systemd installs it"
done
[[ -z $BIN || -x $BIN ]] || die "COOPCC_BIN=$BIN is not an executable"

WORK=$(mktemp -d /var/tmp/coopcc-nspawn.XXXXXX)
ROOT=$WORK/root
NSPAWN_PID=
LEADER=
# nspawn allocates a scope over D-Bus when the host runs systemd; elsewhere
# (a container or VM whose PID 1 is not systemd, like this project's machines)
# it must stay in the caller's cgroup and creates <that cgroup>/payload.
KEEP_UNIT=()
[[ -d /run/systemd/system ]] || KEEP_UNIT=(--keep-unit)
SELF_CG=$(awk -F: '$2 == "name=systemd" || ($1 == "0" && $2 == "") {print $3; exit}' /proc/self/cgroup)

# A long step runs in the background and is waited for, so that a signal
# is handled at once (bash defers traps until a foreground child returns);
# cleanup stops it (timeout passes the signal on to its command).
CHILD=
step() {
	# stdin from /dev/null: without it tar and gzip stopped (state T) under a
	# background timeout here.
	"$@" </dev/null &
	CHILD=$!
	local rc=0
	wait "$CHILD" || rc=$?
	CHILD=
	return "$rc"
}

cleanup() {
	local rc=$?
	set +e
	if [[ -n $CHILD ]] && kill -0 "$CHILD" 2>/dev/null; then
		log "cleanup: stopping $(ps -o args= -p "$CHILD" | cut -c1-60)"
		kill -TERM "$CHILD"
		for _ in $(seq 1 50); do
			kill -0 "$CHILD" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL "$CHILD" 2>/dev/null
		wait "$CHILD" 2>/dev/null
	fi
	if [[ -n $NSPAWN_PID ]] && kill -0 "$NSPAWN_PID" 2>/dev/null; then
		log "cleanup: stopping the container (exit status $rc)"
		if [[ -n $LEADER ]]; then
			timeout 20 nsenter -t "$LEADER" -a systemctl poweroff >/dev/null 2>&1
		fi
		for _ in $(seq 1 100); do
			kill -0 "$NSPAWN_PID" 2>/dev/null || break
			sleep 0.2
		done
		if kill -0 "$NSPAWN_PID" 2>/dev/null; then
			# nspawn: the second SIGTERM terminates the container at once.
			kill -TERM "$NSPAWN_PID"
			sleep 1
			kill -TERM "$NSPAWN_PID"
			sleep 2
		fi
		[[ -n $LEADER ]] && kill -0 "$LEADER" 2>/dev/null && kill -KILL "$LEADER"
		kill -0 "$NSPAWN_PID" 2>/dev/null && kill -KILL "$NSPAWN_PID"
		wait "$NSPAWN_PID" 2>/dev/null
	fi
	# Left by nspawn --keep-unit: <our cgroup>/payload in each hierarchy it used.
	if ((${#KEEP_UNIT[@]})); then
		for h in /sys/fs/cgroup/systemd /sys/fs/cgroup/unified /sys/fs/cgroup; do
			d=$h${SELF_CG%/}/payload
			[[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
		done
	fi
	[[ -n $CACHE ]] && rm -f "$CACHE.tmp"
	if [[ ${COOPCC_NSPAWN_KEEP:-} == 1 ]]; then
		log "kept $WORK"
	else
		if findmnt -R -n -o TARGET "$ROOT" >/dev/null 2>&1; then umount -R "$ROOT" 2>/dev/null; fi
		rm -rf --one-file-system "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# In the container: run a command as root in every namespace of its PID 1.
# (Processes started this way do not inherit the container's seccomp filter;
# anything whose restrictions matter is started by the container's systemd.)
in_ct() { timeout 30 nsenter -t "$LEADER" -a env SYSTEMD_COLORS=0 SYSTEMD_PAGER= "$@"; }

# wait_for SECONDS DESCRIPTION COMMAND...: polls every 0.1 s.
wait_for() {
	local limit=$1 what=$2
	shift 2
	local end=$((SECONDS + limit))
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS >= end)); then
			echo "test-nspawn: no $what within $limit s" >&2
			return 1
		fi
		sleep 0.1
	done
}

T0=$SECONDS
if [[ -z $BIN ]]; then
	BIN=$WORK/coopcc
	log "building $BIN (CGO_ENABLED=0)"
	CGO_ENABLED=0 step nice -n 19 "${GO:-go}" build -buildvcs=auto -o "$BIN" ./cmd/coopcc || die "go build failed"
fi
TR=$SECONDS

# 1. The Debian tree.
if [[ -n $CACHE && -f $CACHE ]]; then
	log "unpacking $CACHE"
	mkdir -p "$ROOT"
	step timeout 300 nice -n 19 tar -C "$ROOT" -xzf "$CACHE" || die "unpacking $CACHE failed (or took over 300 s)"
else
	log "debootstrap $SUITE from $MIRROR (minbase + systemd, iproute2, procps)"
	step timeout 1500 nice -n 19 debootstrap --variant=minbase \
		--include=systemd,systemd-sysv,dbus,iproute2,procps \
		"$SUITE" "$ROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
		{
			tail -20 "$WORK/debootstrap.log"
			die "debootstrap failed (log above)"
		}
	if [[ -n $CACHE ]]; then
		mkdir -p "$(dirname "$CACHE")"
		step timeout 300 nice -n 19 tar -C "$ROOT" -czf "$CACHE.tmp" . && mv "$CACHE.tmp" "$CACHE"
		log "cached the tree in $CACHE"
	fi
fi
T_ROOTFS=$((SECONDS - TR))

# 2. coopcc inside: binary, unit, configuration, key; a test unit that gives
#    the agent its interface (a veth pair in the container's private network
#    namespace) and sets the namespace's default congestion control to a
#    non-default value before the agent starts.
ORIG_CC=bbr
grep -qw bbr /proc/sys/net/ipv4/tcp_available_congestion_control || ORIG_CC=reno
echo "$MACHINE" >"$ROOT/etc/hostname"
install -m 0755 "$BIN" "$ROOT/usr/local/bin/coopcc"
install -m 0644 "$UNIT" "$ROOT/etc/systemd/system/coopcc-agent.service"
install -d -m 0755 "$ROOT/etc/coopcc"
sed -e 's/^iface = .*/iface = "coop0"/' -e 's/^id = .*/id = "nspawn-test"/' "$CONF" >"$ROOT/etc/coopcc/coopcc.toml"
(umask 077 && "$BIN" peer keygen >"$ROOT/etc/coopcc/group.key")
cat >"$ROOT/etc/systemd/system/coopcc-testnet.service" <<EOF
[Unit]
Description=coopcc test: the agent's interface, and $ORIG_CC as the original default CC
Before=coopcc-agent.service
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/sbin/ip link add coop0 type veth peer name coop1
ExecStart=/usr/sbin/ip addr add 10.77.250.1/24 dev coop0
ExecStart=/usr/sbin/ip link set coop0 up
ExecStart=/usr/sbin/ip link set coop1 up
ExecStart=/usr/sbin/sysctl -q -w net.ipv4.tcp_congestion_control=$ORIG_CC
[Install]
WantedBy=multi-user.target
EOF
# systemctl enable, done by hand since the container's systemd is not running yet.
mkdir -p "$ROOT/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/coopcc-testnet.service "$ROOT/etc/systemd/system/multi-user.target.wants/"
ln -sf /etc/systemd/system/coopcc-agent.service "$ROOT/etc/systemd/system/multi-user.target.wants/"
# No login prompt on the console.
ln -sf /dev/null "$ROOT/etc/systemd/system/console-getty.service"

# 3. Boot. BPF needs CAP_BPF and CAP_PERFMON (not in nspawn's default set)
#    and the bpf/perf_event_open system calls (not in nspawn's seccomp
#    allow-list). --console=read-only: nspawn drains the console (a passive
#    console fills up and blocks PID 1).
log "booting the container ($MACHINE)"
TB=$SECONDS
nice -n 19 systemd-nspawn --quiet -D "$ROOT" --machine="$MACHINE" --register=no "${KEEP_UNIT[@]}" \
	--boot --console=read-only --private-network \
	--capability=CAP_BPF,CAP_PERFMON,CAP_NET_ADMIN,CAP_SYS_ADMIN \
	--system-call-filter='bpf perf_event_open' \
	</dev/null >"$WORK/console.log" 2>&1 &
NSPAWN_PID=$!
for _ in $(seq 1 100); do
	LEADER=$(pgrep -P "$NSPAWN_PID" | head -1) && [[ -n $LEADER ]] && break
	kill -0 "$NSPAWN_PID" 2>/dev/null || break
	sleep 0.1
done
if [[ -z $LEADER ]]; then
	cat "$WORK/console.log"
	die "systemd-nspawn did not start a container (console above)"
fi
booted() { [[ $(in_ct systemctl is-system-running 2>/dev/null) =~ ^(running|degraded)$ ]]; }
if ! wait_for 120 "boot" booted; then
	cat "$WORK/console.log"
	in_ct systemctl --failed --no-pager
	die "the container did not finish booting in 120 s"
fi
T_BOOT=$((SECONDS - TB))
state=$(in_ct systemctl is-system-running)
log "container up in ${T_BOOT} s ($state); systemd $(in_ct systemctl --version | head -1 | awk '{print $2}')"
[[ $state == running ]] || in_ct systemctl --failed --no-pager

ct_cc() { in_ct cat /proc/sys/net/ipv4/tcp_congestion_control; }
prop() { in_ct systemctl show coopcc-agent -P "$1"; }
statefile() { in_ct sh -c 'cat /run/coopcc/state-*.json 2>/dev/null'; }
json_ids() { tr -d ' \n' | grep -o "\"$1\":\[[0-9,]*\]" | grep -o '[0-9][0-9]*'; }
# The first "KEY":"value" of a JSON document (top-level keys come first in
# the agent's status and state files).
json_str() { tr -d ' \n' | grep -o "\"$1\":\"[^\"]*\"" | head -1 | cut -d'"' -f4; }
progs_gone() {
	local id
	for id in "$@"; do
		bpftool prog show id "$id" >/dev/null 2>&1 && return 1
	done
	return 0
}
unit_log() { in_ct journalctl -u coopcc-agent --no-pager -o cat; }

# 4. The unit file itself.
if out=$(in_ct systemd-analyze verify /etc/systemd/system/coopcc-agent.service 2>&1); then
	ok "systemd-analyze verify coopcc-agent.service${out:+ (notes: $out)}"
else
	fail "systemd-analyze verify: $out"
fi

# 5. Started at boot (enabled), Type=notify readiness.
if wait_for 30 "agent active" test "$(prop ActiveState)" = active; then
	ok "started at boot: ActiveState=active SubState=$(prop SubState) Type=$(prop Type) MainPID=$(prop MainPID)"
else
	fail "not active after boot: $(prop ActiveState)/$(prop SubState) Result=$(prop Result)"
	unit_log | tail -20
	exit 1
fi
# Type=notify: systemd logs "Started" only once READY=1 arrived, and the agent
# sends it after everything is up (its "agent started" line comes first).
line_of() { unit_log | grep -n -m1 -e "$1" | cut -d: -f1; }
la=$(line_of 'agent started')
ls=$(line_of '^Started ')
if [[ -n $la && -n $ls ]] && ((la < ls)); then
	ok "Type=notify: the agent's \"agent started\" (journal line $la) precedes systemd's \"Started\" (line $ls): READY=1 after start-up"
else
	fail "Type=notify ordering: \"agent started\" at line ${la:-none}, \"Started\" at line ${ls:-none}"
fi
PID1=$(prop MainPID)
CC1=$(ct_cc)
ST1=$(statefile)
IDS1=$(json_ids program_ids <<<"$ST1" | tr '\n' ' ')
[[ $CC1 == coopcc_* ]] && ok "namespace default is the agent's $CC1 (original $ORIG_CC, recorded as \"$(json_str original_cc <<<"$ST1")\")" ||
	fail "namespace default $CC1, want coopcc_…"
[[ -n $IDS1 ]] && ok "state file lists the agent's BPF programs: $IDS1" || fail "no program IDs in the state file: $ST1"
if js=$(in_ct /usr/local/bin/coopcc agent status --json); then
	ok "coopcc agent status --json: backend $(json_str datapath_backend <<<"$js"), policy $(json_str policy <<<"$js")"
else
	fail "coopcc agent status --json failed"
fi

# 6. Hardening, as applied to the running process.
st=$(in_ct cat "/proc/$PID1/status")
capeff=$(awk '/^CapEff/ {print $2}' <<<"$st")
capbnd=$(awk '/^CapBnd/ {print $2}' <<<"$st")
# CAP_NET_ADMIN 12, CAP_NET_RAW 13, CAP_SYS_ADMIN 21, CAP_PERFMON 38, CAP_BPF 39
want_caps=000000c000203000
[[ $capeff == "$want_caps" && $capbnd == "$want_caps" ]] &&
	ok "capabilities: effective = bounding = $want_caps (CAP_BPF CAP_PERFMON CAP_NET_ADMIN CAP_SYS_ADMIN CAP_NET_RAW)" ||
	fail "capabilities: CapEff $capeff CapBnd $capbnd, want $want_caps"
grep -q '^NoNewPrivs:[[:space:]]*1' <<<"$st" && ok "NoNewPrivileges: no_new_privs set" || fail "no_new_privs not set"
grep -q '^Seccomp:[[:space:]]*2' <<<"$st" && ok "SystemCallFilter: seccomp filter mode" || fail "no seccomp filter: $(grep Seccomp <<<"$st")"
mnt() { in_ct nsenter -t "$PID1" -m findmnt -n -o "$2" -T "$1"; }
[[ $(mnt /usr OPTIONS) == ro,* ]] && ok "ProtectSystem=strict: /usr read-only" || fail "/usr: $(mnt /usr OPTIONS)"
[[ $(mnt /proc/sys/net/ipv4 OPTIONS) == rw,* ]] && ok "ReadWritePaths: /proc/sys/net/ipv4 writable" ||
	fail "/proc/sys/net/ipv4: $(mnt /proc/sys/net/ipv4 OPTIONS)"
[[ $(mnt /run/coopcc OPTIONS) == rw,* ]] && ok "RuntimeDirectory: /run/coopcc writable" || fail "/run/coopcc: $(mnt /run/coopcc OPTIONS)"
[[ $(mnt /tmp SOURCE) == *systemd-private-* ]] && ok "PrivateTmp: the service's /tmp is $(mnt /tmp SOURCE | tr '\n' ' ')" ||
	fail "PrivateTmp: the service's /tmp is $(mnt /tmp SOURCE)"
if sec=$(in_ct systemd-analyze security coopcc-agent.service --no-pager 2>&1 | tail -1); then
	ok "systemd-analyze security: $sec"
fi
mem=$(prop MemoryMax)
if in_ct test -f "/sys/fs/cgroup/system.slice/coopcc-agent.service/memory.max"; then
	ok "MemoryMax=$mem enforced (memory.max $(in_ct cat /sys/fs/cgroup/system.slice/coopcc-agent.service/memory.max))"
else
	echo "note MemoryMax=$mem, CPUQuota: no memory/cpu controller in this container's cgroup tree (cgroup controllers on the host: $(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null || echo "v1 or hybrid")); not verified"
fi

# 7. Reload (SIGHUP): a new policy from the file is applied at once.
in_ct sed -i 's/^name = "coop"/name = "hirai2013"/' /etc/coopcc/coopcc.toml
in_ct systemctl reload coopcc-agent
policy_is() { [[ $(in_ct /usr/local/bin/coopcc agent status --json | json_str policy) == "$1" ]]; }
if wait_for 10 "reload" policy_is hirai2013 && [[ $(prop MainPID) == "$PID1" ]]; then
	ok "systemctl reload: policy coop → hirai2013 in the same process (pid $PID1)"
else
	fail "reload: policy $(in_ct /usr/local/bin/coopcc agent status --json | json_str policy), pid $(prop MainPID) (was $PID1)"
fi

# 8. Crash: SIGKILL → Restart=on-failure, and the new agent adopts the leftovers.
log "systemctl kill -s KILL coopcc-agent"
TK=$SECONDS
in_ct systemctl kill -s KILL coopcc-agent
restarted() { [[ $(prop NRestarts) == 1 && $(prop ActiveState) == active && $(prop MainPID) != "$PID1" && $(prop MainPID) != 0 ]]; }
if wait_for 30 "restart" restarted; then
	ok "Restart=on-failure: restarted after SIGKILL in $((SECONDS - TK)) s (NRestarts=1, pid $PID1 → $(prop MainPID); RestartSec=$(prop RestartUSec))"
else
	fail "no restart after SIGKILL: $(prop ActiveState)/$(prop SubState) NRestarts=$(prop NRestarts) Result=$(prop Result)"
	unit_log | tail -20
	exit 1
fi
if unit_log | grep -q 'adopting its leftovers'; then
	ok "the new agent found the dead one's state file and adopted its leftovers: $(unit_log | grep 'adopting its leftovers' | tail -1 | cut -c1-240)"
else
	fail "the new agent did not adopt the dead agent's leftovers (state file lost? RuntimeDirectoryPreserve=$(prop RuntimeDirectoryPreserve))"
fi
ST2=$(statefile)
CC2=$(ct_cc)
IDS2=$(json_ids program_ids <<<"$ST2" | tr '\n' ' ')
[[ $(json_str original_cc <<<"$ST2") == "$ORIG_CC" ]] && ok "the original default survives the crash: $ORIG_CC" ||
	fail "original default after the crash \"$(json_str original_cc <<<"$ST2")\", want $ORIG_CC"
[[ $CC2 == coopcc_* && $CC2 != "$CC1" ]] && ok "namespace default moved from the dead $CC1 to the new $CC2" ||
	fail "namespace default after restart $CC2 (dead agent's: $CC1)"
# shellcheck disable=SC2086
if wait_for 15 "old programs freed" progs_gone $IDS1; then
	ok "the dead agent's BPF programs are freed ($IDS1)"
else
	fail "BPF programs of the dead agent still loaded: $(for i in $IDS1; do bpftool prog show id "$i" 2>/dev/null | head -1; done)"
fi

# 9. Stop: every BPF program gone, the original default restored, no state left.
log "systemctl stop coopcc-agent"
in_ct systemctl stop coopcc-agent
[[ $(prop ActiveState) == inactive && $(prop Result) == success ]] && ok "systemctl stop: inactive, Result=success" ||
	fail "after stop: $(prop ActiveState) Result=$(prop Result)"
[[ $(ct_cc) == "$ORIG_CC" ]] && ok "namespace default restored to $ORIG_CC" || fail "namespace default after stop $(ct_cc), want $ORIG_CC"
# shellcheck disable=SC2086
if wait_for 15 "programs freed" progs_gone $IDS1 $IDS2; then
	ok "no BPF program of either agent is loaded ($IDS2)"
else
	fail "BPF programs still loaded after stop: $(for i in $IDS1 $IDS2; do bpftool prog show id "$i" 2>/dev/null | head -1; done)"
fi
left=$(grep -ow -e "$CC1" -e "$CC2" /proc/sys/net/ipv4/tcp_available_congestion_control || true)
[[ -z $left ]] && ok "$CC1 and $CC2 unregistered" || fail "still registered: $left"
[[ -z $(statefile) ]] && ok "no state file left in /run/coopcc" || fail "state file left: $(statefile)"
in_ct systemctl start coopcc-agent && in_ct /usr/local/bin/coopcc agent status >/dev/null &&
	ok "starts again after the stop" || fail "does not start again after the stop"
in_ct systemctl stop coopcc-agent
[[ $(ct_cc) == "$ORIG_CC" ]] || fail "namespace default after the second stop $(ct_cc), want $ORIG_CC"

log "journal of coopcc-agent.service:"
unit_log | cut -c1-200 | sed 's/^/    /'
echo "times: rootfs ${T_ROOTFS} s, boot ${T_BOOT} s, total $((SECONDS - T0)) s"
if ((fails)); then
	echo "test-nspawn: $fails check(s) failed"
	exit 1
fi
echo "test-nspawn: all checks passed"

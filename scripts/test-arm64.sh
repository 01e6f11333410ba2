#!/usr/bin/env bash
# shellcheck disable=SC2015 # ok never fails: `test && ok … || fail …` is an if-then-else here
# The arm64 (Android, arm64 Linux) build tested on an x86 machine with
# qemu-user (Debian's qemu-user-static; scripts/install-deps.sh --qemu):
#  1. every package's tests cross-compiled with GOARCH=arm64 CGO_ENABLED=0
#     and run under qemu-aarch64-static (go test -exec). qemu-user translates
#     system calls but not bpf(2) (ENOSYS), sock_diag netlink (EPROTONOSUPPORT),
#     SO_NETNS_COOKIE or IPV6_MULTICAST_IF, and cannot exec an arm64 child
#     without binfmt_misc: COOPCC_TEST_NO_KERNEL=1 makes the tests that need
#     those (nettest.RequireRoot / RequireSelfExec: namespaces, BPF, sock_diag,
#     iperf3 runs) skip. Everything else runs: policies, the peer protocol and
#     its test vectors, monitor parsing, config, status JSON, the emulator's
#     models, lab analysis, and the parsing of the embedded BPF objects.
#  2. the static arm64 binary `make android` builds, run under qemu:
#     version, policy eval, peer decode/encode of a protocol test vector,
#     clamp --probe (must report the missing BPF support, not crash), and a
#     check that the binary embeds every BPF object byte for byte.
# Usage: scripts/test-arm64.sh (or make test-arm64). No root needed.
# The tests are built with -trimpath like the binary, so that the binary reuses
# their compiled packages. Heavy steps run under nice -n 19.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
QEMU=${QEMU:-qemu-aarch64-static}
command -v "$QEMU" >/dev/null || {
	echo "test-arm64: $QEMU missing: scripts/install-deps.sh --qemu (or make deps-qemu) installs it" >&2
	exit 1
}
T0=$SECONDS
fails=0
ok() { printf 'ok   %s\n' "$*"; }
fail() {
	printf 'FAIL %s\n' "$*"
	fails=$((fails + 1))
}

# 1. The tests.
echo "== go test ./... for linux/arm64 under $QEMU (COOPCC_TEST_NO_KERNEL=1)"
export COOPCC_TEST_NO_KERNEL=1
# TESTFLAGS_ARM64 (e.g. "-run TestVectors -v") is split into words on purpose.
# shellcheck disable=SC2086
if ! GOOS=linux GOARCH=arm64 CGO_ENABLED=0 nice -n 19 "$GO" test -trimpath -exec "$QEMU" -count=1 -timeout 10m ${TESTFLAGS_ARM64:-} ./...; then
	fail "go test under qemu (above)"
fi
T_TESTS=$((SECONDS - T0))

# 2. The binary.
BIN=bin/coopcc-linux-arm64
echo "== $BIN under $QEMU"
mkdir -p bin
CGO_ENABLED=0 GOOS=linux GOARCH=arm64 nice -n 19 "$GO" build -buildvcs=auto -trimpath -ldflags '-s -w' -o "$BIN" ./cmd/coopcc
run() { "$QEMU" "$BIN" "$@"; }

out=$(run version)
[[ $out == coopcc\ *linux/arm64* ]] && ok "coopcc version: $out" || fail "coopcc version: $out"

out=$(run policy eval --policy hayakawa2015 --n 10 --rtt 256ms --min-rtt 256ms)
[[ $out == *"lo=5 "* && $out == *"hi=17 "* ]] && ok "policy eval hayakawa2015 N=10 RTT 256 ms: lo=5 hi=17" ||
	fail "policy eval: want lo=5 hi=17:
$out"

# The first vector ("full status", encode_matches) and the first invalid one
# ("wrong key") of peer/testdata/vectors.json.
V=peer/testdata/vectors.json
hexes=$(grep -o '"message_hex": "[0-9a-f]*"' "$V" | cut -d'"' -f4)
msg=$(sed -n 1p <<<"$hexes")
bad=$(grep -A1 '"name": "wrong key"' "$V" | grep -o '"message_hex": "[0-9a-f]*"' | cut -d'"' -f4)
group=$(grep -o '"group_name": "[^"]*"' "$V" | head -1 | cut -d'"' -f4)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(umask 077 && grep -o '"key_hex": "[0-9a-f]*"' "$V" | head -1 | cut -d'"' -f4 >"$tmp/key")
fields=$(run peer decode --key-file "$tmp/key" --group "$group" "$msg")
want='"sender_hex":"123456789abcdef","seq":"1","sent_at_unix_ns":"1800000000123456789"'
[[ $fields == *"$want"* && $fields == *'"cwnd_segments":120'* && $fields == *'"policy":"coop"'* ]] &&
	ok "peer decode of the vector \"full status\": $fields" || fail "peer decode: $fields"
again=$(run peer encode --key-file "$tmp/key" --group "$group" <<<"$fields")
[[ $again == "$msg" ]] && ok "peer encode of the decoded fields gives the vector's bytes back" ||
	fail "peer encode: $again, want $msg"
if out=$(run peer decode --key-file "$tmp/key" --group "$group" "$bad" 2>&1); then
	fail "peer decode accepted the vector \"wrong key\": $out"
else
	[[ $out == *'"reason":"bad MAC"'* ]] && ok "peer decode rejects the vector \"wrong key\": bad MAC" || fail "peer decode of \"wrong key\": $out"
fi

out=$(run clamp --probe 2>&1) || true
[[ $out == *"backend: none"* && $out == *"function not implemented"* ]] &&
	ok "clamp --probe: no BPF under qemu-user, reported: $(grep -m1 missing <<<"$out")" ||
	fail "clamp --probe under qemu: $out"

# The BPF objects are embedded in the binary byte for byte.
if command -v python3 >/dev/null; then
	n=0
	for o in datapath/*_bpfel.o monitor/*_bpfel.o; do
		if python3 -c 'import sys; sys.exit(open(sys.argv[2], "rb").read() not in open(sys.argv[1], "rb").read())' "$BIN" "$o"; then
			n=$((n + 1))
		else
			fail "$o is not embedded in $BIN"
		fi
	done
	ok "$n BPF objects (little-endian; datapath/, monitor/) embedded byte for byte in $BIN"
else
	echo "note no python3: the byte-for-byte check of the embedded BPF objects is skipped (TestEmbeddedObjectsParse still ran for arm64)"
fi

echo "times: tests ${T_TESTS} s, total $((SECONDS - T0)) s"
if ((fails)); then
	echo "test-arm64: $fails check(s) failed"
	exit 1
fi
echo "test-arm64: all checks passed"

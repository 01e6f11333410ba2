#!/usr/bin/env bash
# Installs what coopcc's build, tests and demo need on a fresh Debian machine.
# Idempotent: only missing packages are installed. Needs root.
#   iperf3          traffic in the testbed and the integration tests
#   iproute2        ip/tc/ss (namespaces, HTB, the ss comparison benchmark)
#   iputils-ping    reachability checks in tests
#   procps          sysctl
#   clang llvm      compiling the BPF programs (only for `make generate`)
#   libbpf-dev      BPF headers (bpf_helpers.h, ...) for `make generate`
#   bpftool         dumping vmlinux.h for `make generate`, and inspecting programs
#   slurm-wlm munge a one-machine Slurm (slurmctld + slurmd) for the sharded-sweep
#                   demonstration, experiments/slurm/demo.sh (only with --slurm)
#   qemu-user-static  runs the arm64 build's tests and binary on x86,
#                   scripts/test-arm64.sh (only with --qemu)
#   systemd-container debootstrap bpftool  boots the systemd unit in a Debian
#                   container, deploy/systemd/test-nspawn.sh (only with --systemd)
# Usage: install-deps.sh [--bpf] [--slurm] [--qemu] [--systemd]
set -euo pipefail

want=(iperf3 iproute2 iputils-ping procps)
for opt in "$@"; do
	case $opt in
	--bpf) want+=(clang llvm libbpf-dev bpftool) ;;
	--slurm) want+=(slurm-wlm munge) ;;
	--qemu) want+=(qemu-user-static) ;;
	--systemd) want+=(systemd-container debootstrap bpftool) ;;
	*)
		echo "install-deps: unknown option $opt (want --bpf, --slurm, --qemu, --systemd)" >&2
		exit 2
		;;
	esac
done

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	if [[ $(id -u) -ne 0 ]]; then
		echo "install-deps: missing ${missing[*]}; run as root (sudo make deps)" >&2
		exit 1
	fi
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v go >/dev/null || { echo "install-deps: Go 1.26+ is required (https://go.dev/dl)" >&2; exit 1; }

# coopcc — see README.md. Two commands on a fresh machine: `make demo`, `make test`.
GO       ?= go
BIN      := bin/coopcc
# Stamp the git revision into the binary (coopcc version, the lab's meta.json)
# even where the environment sets GOFLAGS=-buildvcs=false.
BUILDFLAGS ?= -buildvcs=auto
PKGS     := ./...
# Integration tests create namespaces and load BPF programs: they need root.
TESTFLAGS ?= -count=1 -timeout 20m
STATICCHECK := v0.8.2

.PHONY: all build android test test-arm64 test-systemd demo generate bench fuzz soak lint deps deps-bpf deps-slurm deps-qemu deps-systemd slurm-demo clean

all: build

deps:
	@scripts/install-deps.sh

deps-bpf:
	@scripts/install-deps.sh --bpf

deps-slurm:
	@scripts/install-deps.sh --slurm

deps-qemu:
	@scripts/install-deps.sh --qemu

deps-systemd:
	@scripts/install-deps.sh --systemd

# A real one-machine Slurm runs a 4-shard job array of a tiny sweep and merges
# it (docs/scenarios.md, "Sweeps across machines"). Needs root.
slurm-demo: deps-slurm build
	experiments/slurm/demo.sh

build:
	$(GO) build $(BUILDFLAGS) -o $(BIN) ./cmd/coopcc

test: deps build
	$(GO) vet $(PKGS)
	$(GO) test $(TESTFLAGS) $(PKGS)

# Static arm64 binaries for rooted Android devices and arm64 Linux (docs/agent.md).
android:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -ldflags '-s -w' -o bin/coopcc-linux-arm64 ./cmd/coopcc
	CGO_ENABLED=0 GOOS=android GOARCH=arm64 $(GO) build -trimpath -ldflags '-s -w' -o bin/coopcc-android-arm64 ./cmd/coopcc

# The arm64 build tested under qemu-user: every package's tests (those needing
# the kernel's BPF, namespaces or sock_diag skip) and the binary itself
# (docs/agent.md, "Android"). Not part of `make test`: ~4 min with a cold
# build cache on 2 cores, 35 s warm.
test-arm64: deps-qemu
	scripts/test-arm64.sh

# The systemd unit booted under a real systemd (systemd-nspawn, a debootstrapped
# Debian tree): start, reload, kill -9 and restart, stop (docs/agent.md,
# "systemd"). Needs root and Debian's mirror; 2–12 min on 2 cores, most of it debootstrap.
test-systemd: deps-systemd
	GO=$(GO) deploy/systemd/test-nspawn.sh

# The headline experiment on the embedded default scenario.
demo: deps build
	scripts/demo.sh

# Regenerates the bpf2go objects (needs clang; `make deps-bpf` installs it).
generate: deps-bpf
	$(GO) generate ./...

bench: deps build
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 $(PKGS)

# Fuzzes the peer-message decoder and the nl80211 reply parser (count-based:
# time-based -fuzztime can trip a spurious coordinator deadline on a loaded
# machine, golang/go#75804).
FUZZTIME ?= 3000000x
fuzz:
	$(GO) test ./peer -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME)
	$(GO) test ./internal/wifirate -run '^$$' -fuzz FuzzParseStation -fuzztime $(FUZZTIME)

# An hour of 10 coop agents in the lab: their memory, descriptors, threads and
# the BPF objects must stay flat (docs/performance.md, "Soak").
SOAK_MINUTES ?= 60
soak: deps build
	experiments/soak/soak.sh $(SOAK_MINUTES)

lint:
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK) $(PKGS)

clean:
	rm -rf bin

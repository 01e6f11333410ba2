package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/coopcc/coopcc/internal/nettest"
	"github.com/coopcc/coopcc/internal/pidlock"
)

// lab run --lock: the run holds the lock it is given, so runs with different
// locks can go side by side and a run given a held one is refused, naming it.
func TestLabRunLockFlag(t *testing.T) {
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	lockPath := filepath.Join(t.TempDir(), "shard-1.lock")
	held, err := pidlock.Acquire(lockPath, false)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	out, err := runCLI(t, "lab", "run", "tiny", "--backend", "emu", "--coopcc", "/bin/true", "--lock", lockPath, "--out", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "another lab run is in progress") || !strings.Contains(err.Error(), lockPath) {
		t.Fatalf("with --lock %s held: error %v (output %q), want a refusal naming that lock", lockPath, err, out)
	}
}

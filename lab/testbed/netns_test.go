package testbed

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/coopcc/coopcc/internal/nettest"
)

// TestCleanKeepsLiveRuns: a namespace whose owner still runs is kept, whatever
// the owner's binary is called (a sweep started from a copy named otherwise
// was once killed by another user's `lab clean`); a dead owner's is removed.
func TestCleanKeepsLiveRuns(t *testing.T) {
	nettest.RequireRoot(t)
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	live := fmt.Sprintf("%s%d-1-sta1", NamePrefix, sleeper.Process.Pid)
	dead := fmt.Sprintf("%s%d-1-sta1", NamePrefix, 4194309) // above any pid_max
	for _, n := range []string{live, dead} {
		nettest.Run(t, "ip", "netns", "add", n)
		n := n
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", n).Run() })
	}
	removed := cleanOwn(t, live, dead)
	if !slices.Contains(removed, dead) || slices.Contains(removed, live) {
		t.Fatalf("removed %v: want %s (dead owner) and not %s (live owner named sleep)", removed, dead, live)
	}
}

// cleanOwn runs Clean and fails on an error about one of names. Leftovers of
// other runs on this machine may resist removal (see removeNetnsFile); only
// the test's own namespaces are its subject.
func cleanOwn(t *testing.T, names ...string) []string {
	t.Helper()
	removed, err := Clean(false)
	if err != nil {
		for _, n := range names {
			if strings.Contains(err.Error(), n) {
				t.Fatal(err)
			}
		}
		t.Logf("other leftovers not removed: %v", err)
	}
	return removed
}

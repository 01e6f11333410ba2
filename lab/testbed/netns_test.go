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

// A lab namespace gets a TCP hash of its own (childEhashEntries buckets), so
// that the sampler's inet_diag dumps do not walk the host's table; the
// host's sysctl that sizes children is left as it was.
func TestNetnsOwnTCPHash(t *testing.T) {
	nettest.RequireRoot(t)
	const key = "net.ipv4.tcp_child_ehash_entries"
	host, err := readSysctls("", []string{key})
	if err != nil || host[key] == "" {
		t.Skipf("kernel without %s (before 6.1): %v", key, err)
	}
	name := newPrefix() + "-hash"
	if err := createNetns(name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deleteNetns(name) })
	got, err := readSysctls(name, []string{"net.ipv4.tcp_ehash_entries"})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint(childEhashEntries); got["net.ipv4.tcp_ehash_entries"] != want {
		t.Fatalf("namespace's tcp_ehash_entries %q, want %s (its own hash)", got["net.ipv4.tcp_ehash_entries"], want)
	}
	after, _ := readSysctls("", []string{key})
	if after[key] != host[key] {
		t.Fatalf("host's %s changed from %s to %s", key, host[key], after[key])
	}
}

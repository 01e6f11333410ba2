package nettest

import (
	"strings"
	"sync"
	"testing"
	"time"
)

func TestVethRateLimitAndIperf3(t *testing.T) {
	a, b := NewNS(t, "nt-a"), NewNS(t, "nt-b")
	la, lb := Veth(t, a, "10.77.1.1/24", b, "10.77.1.2/24")
	RateLimit(t, la, "20mbit", 100)
	b.Iperf3Server(t, 5201)
	run := a.Iperf3Client(t, lb.Addr, 5201, 2*time.Second)
	out, err := run.Wait()
	if err != nil {
		t.Fatalf("iperf3: %v\n%s", err, out)
	}
	if !strings.Contains(out, `"sum_received"`) {
		t.Fatalf("no iperf3 JSON report: %s", out)
	}
	if a.Exec(t, "ip", "-o", "link", "show", la.Dev) == "" {
		t.Fatal("veth end missing")
	}
}

func TestBridge(t *testing.T) {
	hub := NewNS(t, "nt-hub")
	m1, m2 := NewNS(t, "nt-m1"), NewNS(t, "nt-m2")
	addrs := Bridge(t, hub, "10.77.2", m1, m2)
	m1.Exec(t, "ping", "-c1", "-W2", addrs[1])
}

func TestCleanupRemovesNamespace(t *testing.T) {
	RequireRoot(t) // else the inner test skips, name stays "" and is "in" every list
	var name string
	t.Run("inner", func(t *testing.T) { name = NewNS(t, "nt-gone").Name })
	if strings.Contains(Run(t, "ip", "netns", "list"), name) {
		t.Fatalf("namespace %s still exists after its test ended", name)
	}
}

func TestSweepStaleRemovesDeadCreatorsNamespaces(t *testing.T) {
	RequireRoot(t)
	// A PID that cannot be alive: above pid_max's hard limit (4194304).
	dead := "nt-stale-4194309-1"
	Run(t, "ip", "netns", "add", dead)
	t.Cleanup(func() { (&NS{Name: dead}).destroy() })
	live := NewNS(t, "nt-live") // our own PID: must survive
	sweepOnce = sync.Once{}
	sweepStale()
	list := Run(t, "ip", "netns", "list")
	if strings.Contains(list, dead) {
		t.Errorf("stale namespace %s (dead creator) not removed", dead)
	}
	if !strings.Contains(list, live.Name) {
		t.Errorf("live namespace %s removed", live.Name)
	}
}

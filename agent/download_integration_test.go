package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coopcc/coopcc/agent"
	"github.com/coopcc/coopcc/internal/flowtest"
	"github.com/coopcc/coopcc/internal/nettest"
)

// TestAgentBoundsADownload runs the real agent on a terminal that downloads
// through a 20 Mbit/s bottleneck with a long queue: with a static bound of
// hi segments the window the terminal advertises and the server's flight
// stay at hi (receive side, docs/datapath.md), the agent's own status
// reports the download, and after SIGKILL of the agent the window returns
// to autotuning within the lease.
func TestAgentBoundsADownload(t *testing.T) {
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	bin := nettest.CoopccBinary(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "group.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("6b", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sta := nettest.NewNS(t, "agdls")
	srv := nettest.NewNS(t, "agdlv")
	staEnd, srvEnd := nettest.Veth(t, sta, "10.77.216.1/24", srv, "10.77.216.254/24")
	nettest.RateLimit(t, srvEnd, "20mbit", 1000) // the server's egress: the download's bottleneck

	const hi, lease = 6, 2 * time.Second
	a := startAgent(t, bin, sta, dir, "--iface", staEnd.Dev, "--key-file", key, "--group", "dltest",
		"--policy", "static", "--param", "static_hi=6", "--monitor-interval", "200ms", "--lease", lease.String())
	r := a.waitStatus(t, 30*time.Second, "agent up", func(agent.StatusReport) bool { return true })
	if !strings.Contains(r.Backend, "rcvwnd") {
		t.Fatalf("backend %q: the receive side did not load", r.Backend)
	}

	srv.Iperf3Server(t, 5201)
	run := sta.Iperf3Client(t, "10.77.216.254", 5201, 15*time.Second, "-R", "-C", "cubic")
	defer func() { _ = run.Cmd.Process.Kill() }()
	a.waitStatus(t, 10*time.Second, "the download in the own status", func(r agent.StatusReport) bool {
		return r.Own.DownFlows > 0 && r.Own.RcvHi == hi
	})

	// The bound applies as data arrives (TCP never shrinks an advertised
	// window): the flight of before the agent's first bound drains first.
	settled := false
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && !settled; time.Sleep(50 * time.Millisecond) {
		snd, ok := flowtest.DataFlow(t, srv.Name, 5201)
		settled = ok && snd.Unacked <= hi+1
	}
	if !settled {
		t.Fatalf("the server's flight did not come down to the bound of %d segments within 3 s", hi)
	}
	var maxWnd, maxFlight, mss uint32
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		rcv, ok1 := flowtest.DataFlow(t, sta.Name, 5201)
		snd, ok2 := flowtest.DataFlow(t, srv.Name, 5201)
		if !ok1 || !ok2 {
			continue
		}
		maxWnd, maxFlight, mss = max(maxWnd, rcv.RcvWnd), max(maxFlight, snd.Unacked), snd.MSS
	}
	if mss == 0 || maxWnd == 0 || maxWnd > (hi+1)*mss || maxFlight > hi+1 {
		t.Fatalf("bounded download: advertised window up to %d B, flight up to %d segments (mss %d), want <= %d segments", maxWnd, maxFlight, mss, hi)
	}
	t.Logf("bounded: window <= %d B, server flight <= %d segments", maxWnd, maxFlight)

	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for {
		snd, ok := flowtest.DataFlow(t, srv.Name, 5201)
		if ok && snd.Unacked > 3*hi {
			el := time.Since(killed)
			t.Logf("released %v after SIGKILL (lease %v): flight %d", el, lease, snd.Unacked)
			if el > lease+time.Second {
				t.Errorf("released only %v after SIGKILL, want <= lease + 1 s", el)
			}
			return
		}
		if time.Since(killed) > lease+3*time.Second {
			t.Fatalf("download still bounded %v after SIGKILL: flight %d", time.Since(killed), snd.Unacked)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

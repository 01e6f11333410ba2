package agent_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/coopcc/coopcc/agent"
	"github.com/coopcc/coopcc/datapath"
	"github.com/coopcc/coopcc/internal/nettest"
)

// crashBed is one station namespace with a long-lived upload through a
// rate-limited veth to a server namespace, and the arguments of an agent
// that bounds it to crashHi.
type crashBed struct {
	bin, dir string
	sta, srv *nettest.NS
	dst      string
	args     []string
}

const (
	crashHi       = 5
	crashInterval = 200 * time.Millisecond
)

// newCrashBed builds the namespaces; defaultCC, if not "", is set as the
// station's default congestion control before the upload starts.
func newCrashBed(t *testing.T, upload time.Duration, defaultCC string) *crashBed {
	t.Helper()
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	nettest.RequireTool(t, "ss")
	b := &crashBed{bin: nettest.CoopccBinary(t), dir: t.TempDir()}
	key := filepath.Join(b.dir, "group.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("3c", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.sta, b.srv = nettest.NewNS(t, "agcrs"), nettest.NewNS(t, "agcrv")
	l, r := nettest.Veth(t, b.sta, "10.77.221.1/24", b.srv, "10.77.221.2/24")
	// A 20 Mbit/s bottleneck with a long FIFO: unbounded, cwnd grows far
	// beyond crashHi.
	nettest.RateLimit(t, l, "20mbit", 1000)
	b.dst = r.Addr
	if defaultCC != "" {
		b.sta.Sysctl(t, "net.ipv4.tcp_congestion_control", defaultCC)
	}
	b.srv.Iperf3Server(t, 5201)
	b.sta.Iperf3Client(t, b.dst, 5201, upload)
	b.args = []string{"agent", "--iface", l.Dev, "--key-file", key, "--group", "crash",
		"--lock-dir", b.dir, "--status-socket", filepath.Join(b.dir, "agent.sock"),
		"--policy", "static", "--param", fmt.Sprintf("static_hi=%d", crashHi),
		"--monitor-interval", crashInterval.String(), "--lease", "1s", "--log-format", "json"}
	return b
}

// proc is an agent process.
type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder
	done chan struct{}
	err  error
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *proc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// start runs an agent, with COOPCC_TEST_CRASH_AT=crashAt when not empty.
func (b *crashBed) start(t *testing.T, crashAt string, extra ...string) *proc {
	t.Helper()
	p := &proc{cmd: b.sta.Command(context.Background(), b.bin, append(append([]string{}, b.args...), extra...)...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), "COOPCC_TEST_CRASH_AT="+crashAt)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start agent: %v", err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait waits for the process to exit.
func (p *proc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		t.Fatalf("agent did not exit within %v:\n%s", d, p.logs())
		return nil
	}
}

// killed reports whether the process died of SIGKILL.
func killed(err error) bool {
	ee, ok := err.(*exec.ExitError)
	if !ok {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// up waits until the agent answers on its status socket.
func (b *crashBed) up(t *testing.T, p *proc, d time.Duration) agent.StatusReport {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("agent exited before it was up (%v):\n%s", p.err, p.logs())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		r, err := agent.QueryStatus(ctx, filepath.Join(b.dir, "agent.sock"))
		cancel()
		if err == nil {
			return r
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("agent not up within %v:\n%s", d, p.logs())
	return agent.StatusReport{}
}

// sock is one TCP socket as ss shows it.
type sock struct {
	cc    string
	cwnd  int
	acked int64 // bytes_acked
}

// uploads returns the upload's sockets (to the server's port 5201) with
// their congestion control and cwnd, read with `ss -tin`.
func (b *crashBed) uploads(t *testing.T) []sock {
	t.Helper()
	out, err := b.sta.Command(context.Background(), "ss", "-Htin", "dst", b.dst).Output()
	if err != nil {
		t.Fatalf("ss: %v", err)
	}
	return parseSS(string(out))
}

// bulk returns the upload's data socket (the most bytes acked; the control
// connection is idle at the initial window).
func bulk(socks []sock) sock {
	var best sock
	for _, s := range socks {
		if s.acked >= best.acked {
			best = s
		}
	}
	return best
}

func (b *crashBed) defaultCC(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(b.sta.Exec(t, "sysctl", "-n", "net.ipv4.tcp_congestion_control"))
}

func (b *crashBed) stateFile(t *testing.T) agent.StateFile {
	t.Helper()
	// The namespace's inode as a process inside it sees it (NetnsID reads
	// /proc/self, the process's main thread, not a thread switched by Do).
	id, err := strconv.ParseUint(strings.TrimSpace(b.sta.Exec(t, "stat", "-L", "-c", "%i", "/proc/self/ns/net")), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return agent.NewStateFile(b.dir, id)
}

// waitFor polls cond every 20 ms for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// assertRestored checks that the namespace is as before any agent ran:
// default congestion control original, no socket on a coopcc congestion
// control, the recorded BPF objects gone, no coopcc name of the state still
// registered, no state file.
func (b *crashBed) assertRestored(t *testing.T, original string, st *agent.State) {
	t.Helper()
	if got := b.defaultCC(t); got != original {
		t.Errorf("default congestion control %q, want the original %q", got, original)
	}
	for _, s := range b.uploads(t) {
		if datapath.IsCCName(s.cc) {
			t.Errorf("a socket is still on %s", s.cc)
		}
	}
	if st != nil {
		var ids datapath.ObjectIDs
		for _, id := range st.ProgramIDs {
			ids.Programs = append(ids.Programs, ebpf.ProgramID(id))
		}
		for _, id := range st.MapIDs {
			ids.Maps = append(ids.Maps, ebpf.MapID(id))
		}
		// The kernel frees struct_ops objects after an RCU grace period.
		if !waitFor(3*time.Second, ids.Gone) {
			t.Errorf("BPF objects of the dead agent still loaded: %+v", ids)
		}
		for _, n := range st.CCNames {
			if ok, _ := datapath.CCRegistered(n); ok {
				t.Errorf("congestion control %s still registered", n)
			}
		}
	}
	if s, err := b.stateFile(t).Load(); err != nil || s != nil {
		t.Errorf("state file left: %+v, %v", s, err)
	}
}

// Steps at which TestCrashAtEveryStep kills the agent: all of start-up
// (datapath steps included) and of shut-down.
var (
	startSteps = []string{agent.StepLocked, agent.StepStateRecorded, "datapath-loaded", datapath.StepLoaded,
		datapath.StepRegistered, datapath.StepDefaultSet, datapath.StepAdopted, datapath.StepSwitched,
		agent.StepDatapathOpen, agent.StepStateUpdated, agent.StepMonitorOpen, agent.StepPeersStarted, agent.StepReady}
	stopSteps = []string{agent.StepStopping, agent.StepPeersStopped, datapath.StepFailOpen, datapath.StepDefaultRestored,
		datapath.StepSwitchedBack, datapath.StepUnregistered, agent.StepDatapathClosed, agent.StepStateRemoved}
)

// TestCrashAtEveryStep SIGKILLs the agent at each step of start-up and of
// shut-down (COOPCC_TEST_CRASH_AT) while an upload runs, then restores the
// namespace — alternately with `coopcc agent cleanup` and by starting and
// stopping a new agent, which must bound the surviving flow — and checks
// that the namespace is back to its original state: the original default
// congestion control (bbr; the fallback when nothing recorded it is reno
// where the host's default cannot be read, as in this sandbox), no socket
// on a coopcc congestion control, the dead agent's BPF objects freed, no
// state file.
func TestCrashAtEveryStep(t *testing.T) {
	const original = "bbr"
	b := newCrashBed(t, 120*time.Second, original)
	steps := append(append([]string{}, startSteps...), stopSteps...)
	start := time.Now()
	for i, step := range steps {
		p := b.start(t, step)
		if i >= len(startSteps) {
			b.up(t, p, 20*time.Second)
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
		if err := p.wait(t, 20*time.Second); !killed(err) {
			t.Fatalf("step %s: agent was not killed there (exit %v):\n%s", step, err, p.logs())
		}
		st, err := b.stateFile(t).Load()
		if err != nil {
			t.Fatalf("step %s: %v", step, err)
		}
		if (st == nil) != (step == agent.StepLocked || step == agent.StepStateRemoved) {
			t.Fatalf("step %s: state file %+v", step, st)
		}
		how := "cleanup"
		if i%2 == 0 {
			out, err := b.sta.Command(context.Background(), b.bin, "agent", "cleanup", "--lock-dir", b.dir).CombinedOutput()
			if err != nil {
				t.Fatalf("step %s: coopcc agent cleanup: %v\n%s", step, err, out)
			}
		} else {
			how = "restart"
			q := b.start(t, "")
			b.up(t, q, 20*time.Second)
			if !waitFor(3*time.Second, func() bool {
				s := bulk(b.uploads(t))
				return datapath.IsCCName(s.cc) && s.cwnd <= crashHi
			}) {
				t.Errorf("step %s: after the restart the upload is not bounded: %+v", step, b.uploads(t))
			}
			_ = q.cmd.Process.Signal(syscall.SIGTERM)
			if err := q.wait(t, 20*time.Second); err != nil {
				t.Fatalf("step %s: restarted agent: %v\n%s", step, err, q.logs())
			}
		}
		b.assertRestored(t, original, st)
		if t.Failed() {
			t.Fatalf("step %s (%s): namespace not restored; state was %+v", step, how, st)
		}
	}
	t.Logf("%d steps killed and restored in %v", len(steps), time.Since(start).Round(time.Millisecond))
}

// TestRestartRebindsSurvivingFlow is issue 17's crash and restart: after
// SIGKILL the namespace default stays on the dead congestion control and
// the flow runs unbounded once the lease lapses; a new agent adopts the
// flow, which is bounded again within one control interval of the restart
// (the status saying so is then true); stopping it restores the original
// default (bbr, inherited from the host), not reno.
func TestRestartRebindsSurvivingFlow(t *testing.T) {
	b := newCrashBed(t, 60*time.Second, "")
	original := b.defaultCC(t)
	a := b.start(t, "")
	b.up(t, a, 20*time.Second)
	if !waitFor(5*time.Second, func() bool {
		s := bulk(b.uploads(t))
		return datapath.IsCCName(s.cc) && s.cwnd <= crashHi && s.cwnd > 0
	}) {
		t.Fatalf("first agent does not bound the upload: %+v\n%s", b.uploads(t), a.logs())
	}
	dead := bulk(b.uploads(t)).cc
	_ = a.cmd.Process.Signal(syscall.SIGKILL)
	_ = a.wait(t, 10*time.Second)
	killedAt := time.Now()
	if got := b.defaultCC(t); got != dead {
		t.Fatalf("after SIGKILL the default is %q, expected the dead %q (kernel behaviour this test relies on)", got, dead)
	}
	// Fail-open: the lease (1 s) lapses and the flow grows.
	if !waitFor(6*time.Second, func() bool { return bulk(b.uploads(t)).cwnd > 2*crashHi }) {
		t.Fatalf("after SIGKILL the upload did not grow past the bound: %+v", b.uploads(t))
	}
	t.Logf("after SIGKILL: cwnd %d on %s after %v", bulk(b.uploads(t)).cwnd, dead, time.Since(killedAt).Round(time.Millisecond))

	// Sample the upload every 10 ms while the new agent starts.
	type sample struct {
		at time.Time
		s  sock
	}
	var (
		mu      sync.Mutex
		samples []sample
	)
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			out, err := b.sta.Command(context.Background(), "ss", "-Htin", "dst", b.dst).Output()
			if err == nil {
				s := bulk(parseSS(string(out)))
				mu.Lock()
				samples = append(samples, sample{time.Now(), s})
				mu.Unlock()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	started := time.Now()
	n := b.start(t, "")
	b.up(t, n, 20*time.Second)
	ready := time.Now()
	time.Sleep(crashInterval + 300*time.Millisecond)
	close(stop)
	<-sampled
	var bounded time.Time
	for _, s := range samples {
		if s.at.After(started) && datapath.IsCCName(s.s.cc) && s.s.cc != dead && s.s.cwnd <= crashHi {
			bounded = s.at
			break
		}
	}
	if bounded.IsZero() {
		t.Fatalf("the surviving upload was not bounded again after the restart: %+v\n%s", samples[len(samples)-1], n.logs())
	}
	t.Logf("restart: process start → status up %v; status up → upload bounded %v (control interval %v)",
		ready.Sub(started).Round(time.Millisecond), bounded.Sub(ready).Round(time.Millisecond), crashInterval)
	if d := bounded.Sub(ready); d > crashInterval {
		t.Errorf("bounded %v after the restart, more than one control interval (%v)", d, crashInterval)
	}
	r := b.up(t, n, 5*time.Second)
	for _, f := range r.Flows {
		if f.Active && (f.Hi != crashHi || f.Cwnd > crashHi) {
			t.Errorf("status flow %+v, want hi %d and cwnd within it", f, crashHi)
		}
	}
	if !strings.Contains(n.logs(), "adopting its leftovers") {
		t.Errorf("the new agent did not report the dead one's leftovers:\n%s", n.logs())
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	if err := n.wait(t, 20*time.Second); err != nil {
		t.Fatalf("agent stop: %v\n%s", err, n.logs())
	}
	b.assertRestored(t, original, nil)
}

// parseSS reads the congestion control and cwnd of each socket in `ss -tin` output.
func parseSS(out string) []sock {
	var socks []sock
	for _, f := range strings.Fields(out) {
		switch {
		case f == "cubic" || f == "reno" || f == "bbr" || datapath.IsCCName(f):
			socks = append(socks, sock{cc: f})
		case strings.HasPrefix(f, "cwnd:") && len(socks) > 0:
			socks[len(socks)-1].cwnd, _ = strconv.Atoi(strings.TrimPrefix(f, "cwnd:"))
		case strings.HasPrefix(f, "bytes_acked:") && len(socks) > 0:
			socks[len(socks)-1].acked, _ = strconv.ParseInt(strings.TrimPrefix(f, "bytes_acked:"), 10, 64)
		}
	}
	return socks
}

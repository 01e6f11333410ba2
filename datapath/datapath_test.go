package datapath

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/coopcc/coopcc/internal/ktime"
	"github.com/coopcc/coopcc/internal/nettest"
)

func TestBoundsValidate(t *testing.T) {
	for _, tc := range []struct {
		b  Bounds
		ok bool
	}{
		{Bounds{}, true},
		{Bounds{Hi: 7}, true},
		{Bounds{Lo: 4, Hi: 7}, true},
		{Bounds{Lo: 7, Hi: 7}, true},
		{Bounds{Lo: 20}, true},
		{Bounds{Lo: 8, Hi: 7}, false},
		{Bounds{Hi: MaxCwnd + 1}, false},
		{Bounds{Lo: MaxCwnd + 1}, false},
	} {
		if err := tc.b.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: Validate() = %v, want ok=%v", tc.b, err, tc.ok)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	for _, s := range []string{"10.77.1.2", "::ffff:10.77.1.2", "fd00::1", "2001:db8::5"} {
		a := netip.MustParseAddr(s)
		k := keyOf(a)
		if got := addrOf(k); got != a.Unmap() {
			t.Errorf("%s: round trip gave %s", s, got)
		}
	}
	if k := keyOf(netip.Addr{}); k.Addr != [16]byte{} {
		t.Errorf("default key not zero: %x", k.Addr)
	}
	if addrOf(keyOf(netip.Addr{})).IsValid() {
		t.Error("default key maps back to a valid address")
	}
	want := [16]byte{10: 0xff, 11: 0xff, 12: 10, 13: 77, 14: 1, 15: 2}
	if k := keyOf(netip.MustParseAddr("10.77.1.2")); k.Addr != want {
		t.Errorf("IPv4 key = %x, want IPv4-mapped %x", k.Addr, want)
	}
}

func TestSetStructOpsName(t *testing.T) {
	spec, err := loadCubic()
	if err != nil {
		t.Fatal(err)
	}
	ms := spec.Maps["coopcc_cubic"]
	if err := setStructOpsName(ms, "coopcc_0123abcd"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ms.Contents[0].Value.([]byte)), "coopcc_0123abcd\x00") {
		t.Error("name not written into the struct_ops value")
	}
	if err := setStructOpsName(ms, "coopcc_0123abcde"); err == nil {
		t.Error("16-character name accepted")
	}
	n, err := randomCCName()
	if err != nil || len(n) != 15 || !strings.HasPrefix(n, "coopcc_") {
		t.Errorf("randomCCName() = %q, %v", n, err)
	}
}

func availableCC(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ccNames(list string) map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(list) {
		m[f] = true
	}
	return m
}

func waitGone(t *testing.T, ids ObjectIDs) {
	t.Helper()
	if len(ids.Programs) == 0 || len(ids.Maps) == 0 {
		t.Fatalf("no object IDs recorded: %+v", ids)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !ids.Gone() {
		if time.Now().After(deadline) {
			t.Fatalf("BPF objects still loaded 10s after Close: %+v", ids)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestOpenErrorsLeaveNothing(t *testing.T) {
	nettest.RequireRoot(t)
	before := ccNames(availableCC(t))
	if _, err := Open(Options{Backend: "magic"}); err == nil || !strings.Contains(err.Error(), "backend") {
		t.Errorf("bad backend: err = %v", err)
	}
	// Fails after the CC was registered: the undo path must unregister it.
	name := fmt.Sprintf("coopcc_t%07x", os.Getpid()&0xfffffff)
	if _, err := Open(Options{Netns: "coopcc-no-such-ns", CCName: name}); err == nil || !strings.Contains(err.Error(), "coopcc-no-such-ns") {
		t.Errorf("missing netns: err = %v", err)
	}
	if ccNames(availableCC(t))[name] {
		t.Errorf("%s left registered by a failed Open", name)
	}
	if _, err := Open(Options{Lease: -time.Second}); err == nil {
		t.Error("negative lease accepted")
	}
	// Other packages' tests may register coopcc_ names meanwhile: only
	// non-coopcc changes or leftovers of ours would show here.
	for name := range ccNames(availableCC(t)) {
		if !before[name] && !strings.HasPrefix(name, "coopcc_") {
			t.Errorf("congestion control %s appeared after failed Opens", name)
		}
	}
}

func TestProbe(t *testing.T) {
	nettest.RequireRoot(t)
	c := Probe()
	t.Logf("%s", c)
	if !c.StructOps || c.Backend != BackendStructOps {
		t.Errorf("this kernel (6.18 with BTF) should support struct_ops: %s", c)
	}
	if !c.Sockops {
		t.Errorf("sockops fallback not available: %s", c)
	}
}

// openWith opens a send-side datapath in n's client namespace (closed at
// the test's end) with bounds b for dst (the zero Addr: the default) and
// keeps its heartbeat.
func openWith(t *testing.T, n *testNet, dst netip.Addr, b Bounds) *Datapath {
	t.Helper()
	return openBy(t, Open, n, dst, b)
}

// openBy is openWith for either side: open is Open or OpenReceive.
func openBy(t *testing.T, open func(Options) (*Datapath, error), n *testNet, dst netip.Addr, b Bounds) *Datapath {
	t.Helper()
	dp, err := open(Options{Netns: n.cli.Name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dp.Close() })
	if err := dp.Set(dst, b); err != nil {
		t.Fatal(err)
	}
	heartbeat(t, dp)
	return dp
}

// runBounded opens a datapath in n's client namespace with default bounds b,
// runs an iperf3 upload for d and returns the samples.
type boundedRun struct {
	n   *testNet
	dp  *Datapath
	b   Bounds
	run *nettest.Iperf3Run
	s   <-chan []flowSample
	st  chan struct{}
}

func startBounded(t *testing.T, n *testNet, b Bounds, d time.Duration) *boundedRun {
	t.Helper()
	dp := openWith(t, n, netip.Addr{}, b)
	r := &boundedRun{n: n, dp: dp, b: b, st: make(chan struct{})}
	r.s = sampleFlow(t, n.cli.Name, 5201, 50*time.Millisecond, r.st)
	r.run = n.cli.Iperf3Client(t, n.srvAddr, 5201, d)
	return r
}

func (r *boundedRun) wait(t *testing.T) ([]flowSample, float64) {
	t.Helper()
	out, err := r.run.Wait()
	close(r.st)
	s := <-r.s
	if err != nil {
		t.Fatalf("iperf3: %v\n%s", err, out)
	}
	if len(s) < 20 {
		t.Fatalf("only %d samples of the flow", len(s))
	}
	return s, iperf3Rate(t, out)
}

// Two instances in two namespaces at once, each with its own CC name and
// upper bound; the cwnd never exceeds the bound and throughput is about
// hi × MSS / RTT. A clean Close restores the sysctl and unloads everything.
func TestTwoInstancesUpperBound(t *testing.T) {
	n1 := newTestNet(t, 64, "10mbit", 200)
	n2 := newTestNet(t, 66, "10mbit", 200)
	n1.srv.Iperf3Server(t, 5201)
	n2.srv.Iperf3Server(t, 5201)
	old1, _ := readDefaultCC(n1.cli.Name)
	old2, _ := readDefaultCC(n2.cli.Name)

	r1 := startBounded(t, n1, Bounds{Hi: 5}, 4*time.Second)
	r2 := startBounded(t, n2, Bounds{Hi: 9}, 4*time.Second)
	if r1.dp.CCName() == r2.dp.CCName() {
		t.Fatalf("both instances registered %s", r1.dp.CCName())
	}
	for _, r := range []*boundedRun{r1, r2} {
		if cur, _ := readDefaultCC(r.n.cli.Name); cur != r.dp.CCName() {
			t.Errorf("%s: default CC %q, want %q", r.n.cli.Name, cur, r.dp.CCName())
		}
	}
	time.Sleep(time.Second)
	for _, r := range []*boundedRun{r1, r2} {
		cc := ccOfFlows(t, r.n.cli, 5201)
		if len(cc) == 0 || cc[0] != r.dp.CCName() {
			t.Errorf("%s: flows use %v, want %s", r.n.cli.Name, cc, r.dp.CCName())
		}
	}
	for _, r := range []*boundedRun{r1, r2} {
		s, rate := r.wait(t)
		for _, x := range s {
			if x.cc != r.dp.CCName() {
				t.Fatalf("%s: monitor shows the flow on %q, want %s", r.n.cli.Name, x.cc, r.dp.CCName())
			}
		}
		if m := maxCwnd(s); m > r.b.Hi {
			t.Errorf("%s: cwnd reached %d, bound %d", r.n.cli.Name, m, r.b.Hi)
		}
		// Goodput vs hi × MSS / SRTT (SRTT averaged over the second half).
		var srtt float64
		half := s[len(s)/2:]
		for _, x := range half {
			srtt += x.srtt.Seconds()
		}
		srtt /= float64(len(half))
		want := float64(r.b.Hi) * float64(half[0].mss) / srtt
		t.Logf("%s hi=%d: max cwnd %d, goodput %.0f B/s, hi*MSS/SRTT %.0f B/s (SRTT %.1f ms)", r.n.cli.Name, r.b.Hi, maxCwnd(s), rate, want, srtt*1e3)
		if rate < 0.6*want || rate > 1.3*want {
			t.Errorf("%s: goodput %.0f B/s not within [0.6, 1.3] × %.0f", r.n.cli.Name, rate, want)
		}
		c, err := r.dp.Counters()
		if err != nil {
			t.Fatal(err)
		}
		if got := c[netip.MustParseAddr(r.n.srvAddr)]; got.HiApplied == 0 {
			t.Errorf("%s: no upper-bound applications counted: %v", r.n.cli.Name, c)
		}
	}
	for i, r := range []*boundedRun{r1, r2} {
		ids, name := r.dp.Objects(), r.dp.CCName()
		if err := r.dp.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		old := []string{old1, old2}[i]
		if cur, _ := readDefaultCC(r.n.cli.Name); cur != old {
			t.Errorf("%s: default CC after Close %q, want %q", r.n.cli.Name, cur, old)
		}
		if strings.Contains(availableCC(t), name) {
			t.Errorf("%s still registered after Close", name)
		}
		waitGone(t, ids)
	}
}

// A lower bound holds across an induced loss burst and a blackout (RTO):
// ssthresh never goes below it, and cwnd is never below it outside fast
// recovery/CWR (where the
// kernel's PRR sets cwnd after the last CC callback, see docs/datapath.md).
func TestLowerBoundAcrossLossBurst(t *testing.T) {
	const lo = 20
	n := newTestNet(t, 68, "20mbit", 100)
	n.srv.Iperf3Server(t, 5201)
	dp := openWith(t, n, netip.Addr{}, Bounds{Lo: lo})
	stop := make(chan struct{})
	samples := sampleFlow(t, n.cli.Name, 5201, 5*time.Millisecond, stop)
	run := n.cli.Iperf3Client(t, n.srvAddr, 5201, 4*time.Second)
	time.Sleep(1500 * time.Millisecond)
	n.setQueue(t, 1) // the loss burst
	time.Sleep(300 * time.Millisecond)
	n.setQueue(t, 100)
	time.Sleep(700 * time.Millisecond)
	// A blackout long enough for a retransmission timeout (Loss state):
	// the kernel sets cwnd = in_flight + 1, set_state(Loss) raises it to lo.
	n.rtr.Exec(t, "ip", "link", "set", "dev", n.rtrDev, "down")
	time.Sleep(800 * time.Millisecond)
	n.rtr.Exec(t, "ip", "link", "set", "dev", n.rtrDev, "up")
	out, err := run.Wait()
	close(stop)
	s := <-samples
	if err != nil {
		t.Fatalf("iperf3: %v\n%s", err, out)
	}
	var retrans uint32
	var inRecovery, belowInRecovery, inLoss int
	for _, x := range s {
		if x.caState == 4 {
			inLoss++
		}
		retrans = max(retrans, x.totalRetrans)
		if x.ssthresh < lo {
			t.Errorf("ssthresh %d below the lower bound %d (state %d)", x.ssthresh, lo, x.caState)
		}
		if x.caState == 2 || x.caState == 3 {
			inRecovery++
			if x.cwnd < lo {
				belowInRecovery++
			}
			continue
		}
		if x.cwnd < lo {
			t.Errorf("cwnd %d below the lower bound %d in CA state %d", x.cwnd, lo, x.caState)
		}
	}
	t.Logf("%d samples, %d retransmissions, %d in recovery/CWR of which %d had cwnd < lo (PRR), %d in Loss (RTO)", len(s), retrans, inRecovery, belowInRecovery, inLoss)
	if retrans == 0 {
		t.Fatal("the loss burst caused no retransmission: test did not exercise loss")
	}
	c, err := dp.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if got := c[netip.MustParseAddr(n.srvAddr)]; got.LoApplied == 0 {
		t.Errorf("no lower-bound applications counted: %v", c)
	}
}

// helperEnv makes the test binary act as a bounding process (for SIGKILL).
const (
	helperEnv        = "COOPCC_DATAPATH_HELPER_NETNS"
	helperBackendEnv = "COOPCC_DATAPATH_HELPER_BACKEND"
)

// startHelper starts the bounding helper process for ns and returns it
// with the ID of its (last) program once it is ready.
func startHelper(t *testing.T, ns, backend string) (*exec.Cmd, ebpf.ProgramID) {
	t.Helper()
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"="+ns, helperBackendEnv+"="+backend)
	stdout, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = helper.Process.Kill(); _ = helper.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var gotBackend string
	var id ebpf.ProgramID
	if _, serr := fmt.Sscanf(line, "ready %s %d", &gotBackend, &id); err != nil || serr != nil || gotBackend != backend {
		t.Fatalf("helper did not start with backend %s: %q %v %v", backend, line, err, serr)
	}
	return helper, id
}

// waitCwndAbove polls the bulk flow until its cwnd exceeds hi and returns
// how long that took; it fails the test after limit.
func waitCwndAbove(t *testing.T, ns string, hi uint32, since time.Time, limit time.Duration) time.Duration {
	t.Helper()
	for {
		s, ok, err := bulkFlow(ns, 5201)
		if err != nil || !ok {
			t.Fatalf("flow gone: %v", err)
		}
		if s.cwnd > hi {
			return time.Since(since)
		}
		if time.Since(since) > limit {
			t.Fatalf("cwnd still %d, %v after SIGKILL", s.cwnd, time.Since(since))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMain(m *testing.M) {
	if ns := os.Getenv(helperEnv); ns != "" {
		os.Exit(helperMain(ns))
	}
	os.Exit(m.Run())
}

// helperMain bounds the namespace's flows to hi=5 with a 2s lease and
// heartbeats until killed.
func helperMain(ns string) int {
	open := Open
	if os.Getenv(helperBackendEnv) == BackendReceive {
		open = OpenReceive
	}
	dp, err := open(Options{Netns: ns, Lease: 2 * time.Second, Backend: os.Getenv(helperBackendEnv)})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	if err := dp.Set(netip.Addr{}, Bounds{Hi: 5}); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ready", dp.Backend(), dp.Objects().Programs[len(dp.Objects().Programs)-1])
	for {
		time.Sleep(dp.Lease() / 3)
		if err := dp.Heartbeat(); err != nil {
			fmt.Println("error:", err)
			return 1
		}
	}
}

// SIGKILL of the bounding process: within lease + 1 s the flow's cwnd grows
// past the old upper bound (fail-open).
func TestFailOpenAfterSIGKILL(t *testing.T) {
	const hi, lease = 5, 2 * time.Second
	n := newTestNet(t, 70, "20mbit", 200)
	n.srv.Iperf3Server(t, 5201)
	helper, _ := startHelper(t, n.cli.Name, BackendStructOps)
	run := n.cli.Iperf3Client(t, n.srvAddr, 5201, 8*time.Second)
	time.Sleep(1500 * time.Millisecond)
	s, ok, err := bulkFlow(n.cli.Name, 5201)
	if err != nil || !ok {
		t.Fatalf("no flow: %v", err)
	}
	if s.cwnd > hi {
		t.Fatalf("cwnd %d above the bound %d before the kill", s.cwnd, hi)
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	el := waitCwndAbove(t, n.cli.Name, hi, killed, lease+3*time.Second)
	t.Logf("cwnd > %d %v after SIGKILL (lease %v)", hi, el, lease)
	if el > lease+time.Second {
		t.Errorf("cwnd grew past the bound only after %v, want <= lease + 1s = %v", el, lease+time.Second)
	}
	_ = run.Cmd.Process.Kill()

	// The dead instance's CC is still the namespace default (unregistered);
	// the next instance restores the caller's default on Close.
	dead, _ := readDefaultCC(n.cli.Name)
	if !strings.HasPrefix(dead, "coopcc_") {
		t.Fatalf("namespace default after SIGKILL %q", dead)
	}
	dp, err := Open(Options{Netns: n.cli.Name})
	if err != nil {
		t.Fatal(err)
	}
	if err := dp.Close(); err != nil {
		t.Fatal(err)
	}
	own, _ := readDefaultCC("")
	if cur, _ := readDefaultCC(n.cli.Name); cur != own {
		t.Errorf("after recovering from a crashed instance the default is %q, want the caller's %q", cur, own)
	}
}

// A connection opened before Open is switched (BPF TCP iterator) and
// bounded; Close switches it back to plain CUBIC and unloads everything.
func TestSwitchExistingConnection(t *testing.T) {
	const hi = 6
	n := newTestNet(t, 72, "20mbit", 200)
	n.srv.Iperf3Server(t, 5201)
	// A CUBIC flow in another namespace: the iterator must not see it.
	other := newTestNet(t, 84, "20mbit", 200)
	other.srv.Iperf3Server(t, 5201)
	otherRun := other.cli.Iperf3Client(t, other.srvAddr, 5201, 5*time.Second, "-C", "cubic")
	run := n.cli.Iperf3Client(t, n.srvAddr, 5201, 5*time.Second, "-C", "cubic")
	time.Sleep(1200 * time.Millisecond)
	if s, ok, _ := bulkFlow(n.cli.Name, 5201); !ok || s.cwnd <= hi {
		t.Fatalf("pre-existing flow should have grown past %d first: %+v", hi, s)
	}
	dp, err := Open(Options{Netns: n.cli.Name, SwitchExisting: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dp.Close() })
	if err := dp.Set(netip.Addr{}, Bounds{Hi: hi}); err != nil {
		t.Fatal(err)
	}
	heartbeat(t, dp)
	if sw := dp.Switched(); sw.Switched < 1 || sw.Failed != 0 {
		t.Errorf("switched %+v, want >= 1 and no failures", sw)
	}
	time.Sleep(500 * time.Millisecond)
	for _, cc := range ccOfFlows(t, n.cli, 5201) {
		if cc != dp.CCName() {
			t.Errorf("pre-existing flow uses %s, want %s", cc, dp.CCName())
		}
	}
	otherCC := ccOfFlows(t, other.cli, 5201)
	if len(otherCC) == 0 {
		t.Error("no flows in the other namespace")
	}
	for _, cc := range otherCC {
		if strings.HasPrefix(cc, "coopcc_") {
			t.Errorf("a flow in another namespace was switched: %v", otherCC)
		}
	}
	stop := make(chan struct{})
	samples := sampleFlow(t, n.cli.Name, 5201, 20*time.Millisecond, stop)
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	if m := maxCwnd(<-samples); m == 0 || m > hi {
		t.Errorf("switched flow: max cwnd %d, bound %d", m, hi)
	}
	ids := dp.Objects()
	if err := dp.Close(); err != nil {
		t.Fatal(err)
	}
	for _, cc := range ccOfFlows(t, n.cli, 5201) {
		if cc != "cubic" {
			t.Errorf("after Close the flow uses %s, want cubic", cc)
		}
	}
	waitGone(t, ids)
	if out, err := run.Wait(); err != nil {
		t.Fatalf("iperf3: %v\n%s", err, out)
	}
	if out, err := otherRun.Wait(); err != nil {
		t.Fatalf("iperf3 (other namespace): %v\n%s", err, out)
	}
}

// The sockops fallback (TCP_BPF_SNDCWND_CLAMP) holds the upper bound too,
// only for its own namespace.
func TestSockopsUpperBound(t *testing.T) {
	const hi = 6
	n := newTestNet(t, 74, "10mbit", 200)
	other := newTestNet(t, 76, "10mbit", 200)
	n.srv.Iperf3Server(t, 5201)
	other.srv.Iperf3Server(t, 5201)
	dp, err := Open(Options{Netns: n.cli.Name, Backend: BackendSockops})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dp.Close() })
	if dp.Backend() != BackendSockops {
		t.Fatalf("backend %s", dp.Backend())
	}
	if err := dp.Set(netip.Addr{}, Bounds{Hi: hi}); err != nil {
		t.Fatal(err)
	}
	heartbeat(t, dp)
	stop := make(chan struct{})
	samples := sampleFlow(t, n.cli.Name, 5201, 50*time.Millisecond, stop)
	otherSamples := sampleFlow(t, other.cli.Name, 5201, 50*time.Millisecond, stop)
	run := n.cli.Iperf3Client(t, n.srvAddr, 5201, 3*time.Second, "-C", "cubic")
	otherRun := other.cli.Iperf3Client(t, other.srvAddr, 5201, 3*time.Second, "-C", "cubic")
	if out, err := run.Wait(); err != nil {
		t.Fatalf("iperf3: %v\n%s", err, out)
	}
	if out, err := otherRun.Wait(); err != nil {
		t.Fatalf("iperf3: %v\n%s", err, out)
	}
	close(stop)
	s, so := <-samples, <-otherSamples
	// TCP_BPF_SNDCWND_CLAMP acts on the next cwnd-limited ACK: skip the
	// first samples.
	t.Logf("bounded namespace: max cwnd %d (after the first samples %d); other namespace: %d", maxCwnd(s), maxCwnd(s[2:]), maxCwnd(so))
	if m := maxCwnd(s[2:]); m == 0 || m > hi {
		t.Errorf("sockops: max cwnd %d, bound %d", m, hi)
	}
	if m := maxCwnd(so); m <= hi {
		t.Errorf("a flow in another namespace was bounded too (max cwnd %d)", m)
	}
	ids := dp.Objects()
	if err := dp.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ids)
}

// Per-destination bounds (IPv6 key) take precedence over the default, and
// a bound that binds below the flow's share gives goodput ≈ hi × MSS / RTT:
// flow A (IPv6, bound hi=7) shares the bottleneck with flow B (IPv4, no
// entry, no default) whose queue sets A's RTT.
func TestPerDestinationIPv6Binding(t *testing.T) {
	const hi = 7
	n := newTestNet(t, 78, "20mbit", 200)
	n.srv.Iperf3Server(t, 5201)
	n.srv.Iperf3Server(t, 5202)
	dp, err := Open(Options{Netns: n.cli.Name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dp.Close() })
	dst6 := netip.MustParseAddr(n.srvAddr6)
	if err := dp.Set(dst6, Bounds{Hi: hi}); err != nil {
		t.Fatal(err)
	}
	heartbeat(t, dp)
	stop := make(chan struct{})
	sa := sampleFlow(t, n.cli.Name, 5201, 50*time.Millisecond, stop)
	sb := sampleFlow(t, n.cli.Name, 5202, 50*time.Millisecond, stop)
	runB := n.cli.Iperf3Client(t, n.srvAddr, 5202, 6*time.Second) // outlasts A
	time.Sleep(500 * time.Millisecond)                            // let B build the standing queue
	runA := n.cli.Iperf3Client(t, n.srvAddr6, 5201, 4*time.Second)
	outA, errA := runA.Wait()
	outB, errB := runB.Wait()
	close(stop)
	a, b := <-sa, <-sb
	if errA != nil || errB != nil {
		t.Fatalf("iperf3: %v %v\n%s\n%s", errA, errB, outA, outB)
	}
	rateA, rateB := iperf3Rate(t, outA), iperf3Rate(t, outB)
	// B's sawtooth makes A's RTT swing, so compare with the mean of
	// hi × MSS / SRTT over the samples (not hi × MSS / mean SRTT).
	var want, srtt float64
	for _, x := range a {
		want += float64(hi) * float64(x.mss) / x.srtt.Seconds()
		srtt += x.srtt.Seconds()
	}
	want /= float64(len(a))
	srtt /= float64(len(a))
	t.Logf("A (IPv6, hi=%d): max cwnd %d, goodput %.0f B/s, mean hi*MSS/SRTT %.0f B/s (mean SRTT %.1f ms); B (IPv4, unbounded): max cwnd %d, goodput %.0f B/s",
		hi, maxCwnd(a), rateA, want, srtt*1e3, maxCwnd(b), rateB)
	if m := maxCwnd(a); m == 0 || m > hi {
		t.Errorf("bounded IPv6 flow: max cwnd %d, bound %d", m, hi)
	}
	if m := maxCwnd(b); m <= 2*hi {
		t.Errorf("flow without an entry was bounded too: max cwnd %d", m)
	}
	// SRTT is smoothed and lags the swings: allow ±50 %.
	if rateA < 0.5*want || rateA > 1.5*want {
		t.Errorf("bounded flow goodput %.0f B/s not within [0.5, 1.5] × mean hi*MSS/SRTT = %.0f", rateA, want)
	}
	if rateA > 0.5*rateB {
		t.Errorf("bound did not bind: bounded %.0f B/s vs unbounded %.0f B/s", rateA, rateB)
	}
	c, err := dp.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if c[dst6].HiApplied == 0 {
		t.Errorf("no counts for %s: %v", dst6, c)
	}
	if got, ok := c[netip.MustParseAddr(n.srvAddr)]; ok {
		t.Errorf("counts for the unbounded destination: %+v", got)
	}
}

// The sockops fallback is fail-open after SIGKILL too: its program stays
// attached (BPF_PROG_ATTACH, not a link) and removes the clamp once the
// lease has expired.
func TestFailOpenAfterSIGKILLSockops(t *testing.T) {
	const hi, lease = 5, 2 * time.Second
	n := newTestNet(t, 82, "20mbit", 200)
	n.srv.Iperf3Server(t, 5201)
	helper, progID := startHelper(t, n.cli.Name, BackendSockops)
	t.Cleanup(func() {
		// The dead helper's program stays attached: detach it.
		prog, err := ebpf.NewProgramFromID(progID)
		if err != nil {
			return
		}
		defer prog.Close()
		_ = withCgroup2Root(func(root string) error {
			f, err := os.Open(root)
			if err != nil {
				return err
			}
			defer f.Close()
			return link.RawDetachProgram(link.RawDetachProgramOptions{Target: int(f.Fd()), Program: prog, Attach: ebpf.AttachCGroupSockOps})
		})
	})
	run := n.cli.Iperf3Client(t, n.srvAddr, 5201, 8*time.Second, "-C", "cubic")
	time.Sleep(1500 * time.Millisecond)
	if s, ok, err := bulkFlow(n.cli.Name, 5201); err != nil || !ok || s.cwnd > hi {
		t.Fatalf("before the kill: %+v ok=%v err=%v", s, ok, err)
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	el := waitCwndAbove(t, n.cli.Name, hi, killed, lease+3*time.Second)
	t.Logf("sockops: cwnd > %d %v after SIGKILL (lease %v)", hi, el, lease)
	if el > lease+time.Second {
		t.Errorf("cwnd grew past the bound only after %v, want <= lease + 1s = %v", el, lease+time.Second)
	}
	_ = run.Cmd.Process.Kill()
	// A dead instance is detached by the next Open once stale.
	if !sockopsDeadByID(t, progID, uint64(staleAfter)+uint64(lease)) {
		t.Log("(stale detection not exercised: would need to wait lease + 10s)")
	}
}

// sockopsDeadByID evaluates the stale rule for a program at now + ahead.
func sockopsDeadByID(t *testing.T, id ebpf.ProgramID, ahead uint64) bool {
	t.Helper()
	prog, err := ebpf.NewProgramFromID(id)
	if err != nil {
		t.Fatalf("dead helper's program not found: %v", err)
	}
	defer prog.Close()
	now, _ := ktime.Now()
	if sockopsDead(prog, now) {
		t.Error("a program whose lease just expired must not count as dead yet")
	}
	return sockopsDead(prog, now+ahead+uint64(time.Second))
}

// Registering a name that is already taken is an error, not a reason to
// fall back to the sockops backend.
func TestDuplicateNameRejected(t *testing.T) {
	ns := nettest.NewNS(t, "dup")
	name := fmt.Sprintf("coopcc_d%07x", os.Getpid()&0xfffffff)
	dp, err := Open(Options{Netns: ns.Name, CCName: name})
	if err != nil {
		t.Fatal(err)
	}
	defer dp.Close()
	dp2, err := Open(Options{Netns: ns.Name, CCName: name})
	if err == nil {
		dp2.Close()
		t.Fatalf("second instance with the same name opened (backend %s)", dp2.Backend())
	}
	if !strings.Contains(err.Error(), "taken") {
		t.Errorf("err = %v, want it to say the name is taken", err)
	}
	if cur, _ := readDefaultCC(ns.Name); cur != name {
		t.Errorf("the failed Open changed the namespace default to %q", cur)
	}
}

// A restart request (Bounds.Restart) restarts the CUBIC of a connection
// that existed before it, once: the flow, past its first slow start
// (ssthresh finite after the bottleneck's losses), is back in slow start
// (ssthresh infinite) after the request; the counter says one restart; the
// same entry written again without a new request restarts nothing more,
// and a second request restarts it again.
func TestRestartOnRequest(t *testing.T) {
	const infinite = 0x7fffffff
	n := newTestNet(t, 90, "20mbit", 100)
	n.srv.Iperf3Server(t, 5201)
	srv := netip.MustParseAddr(n.srvAddr)
	dp := openWith(t, n, srv, Bounds{Lo: 2})
	stop := make(chan struct{})
	samples := sampleFlow(t, n.cli.Name, 5201, 5*time.Millisecond, stop)
	run := n.cli.Iperf3Client(t, n.srvAddr, 5201, 5*time.Second)
	restarts := func() uint64 {
		t.Helper()
		c, err := dp.Counters()
		if err != nil {
			t.Fatal(err)
		}
		return c[srv].Restarts
	}
	time.Sleep(2 * time.Second) // past the first slow start: the 100-packet queue overflowed
	if got := restarts(); got != 0 {
		t.Fatalf("%d restarts before any request", got)
	}
	requested := time.Now()
	// An upper bound under the flow's window keeps the restarted slow start
	// from ending at once in the full queue (the test must see it).
	if err := dp.Set(srv, Bounds{Lo: 2, Hi: 40, Restart: true}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	first := restarts()
	if err := dp.Set(srv, Bounds{Lo: 2}); err != nil { // the next decision: no new request
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if got := restarts(); got != first {
		t.Errorf("restarts went from %d to %d with no new request", first, got)
	}
	if err := dp.Set(srv, Bounds{Lo: 2, Restart: true}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	second := restarts()
	out, err := run.Wait()
	close(stop)
	s := <-samples
	if err != nil {
		t.Fatalf("iperf3: %v\n%s", err, out)
	}
	// iperf3's control connection sends nothing meanwhile: the data
	// connection restarts, once per request.
	if first != 1 || second != 2 {
		t.Errorf("restarts after the first request %d, after the second %d; want 1 and 2", first, second)
	}
	var finiteBefore, infiniteAfter bool
	for _, x := range s {
		if x.t.Before(requested) {
			finiteBefore = finiteBefore || x.ssthresh < infinite
		} else if x.t.Before(requested.Add(400 * time.Millisecond)) {
			infiniteAfter = infiniteAfter || x.ssthresh >= infinite
		}
	}
	if !finiteBefore {
		t.Fatal("the flow never left its first slow start before the request: the test did not exercise a restart")
	}
	if !infiniteAfter {
		t.Error("no sample in slow start (ssthresh infinite) within 400 ms of the request")
	}
}

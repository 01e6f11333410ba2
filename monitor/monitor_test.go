package monitor

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/internal/nettest"
)

// uploadSetup builds client and server namespaces joined by a veth whose
// client end is limited to 20 Mbit/s (HTB), starts an iperf3 server and a
// CUBIC upload of d, and returns the client namespace, its link and the port.
func uploadSetup(t *testing.T, d time.Duration) (*nettest.NS, nettest.Link, int) {
	t.Helper()
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	cli := nettest.NewNS(t, "moncli")
	srv := nettest.NewNS(t, "monsrv")
	// Only iperf3 -C cubic: a namespace may not make cubic its default while
	// the host's tcp_allowed_congestion_control does not list it (EPERM).
	cl, sl := nettest.Veth(t, cli, "10.77.201.1/24", srv, "10.77.201.2/24")
	nettest.RateLimit(t, cl, "20mbit", 0)
	// One segment per packet, as on a WLAN: without this the veth carries
	// 64 KB GSO packets and the receiver ACKs ~40 times a second.
	cli.Exec(t, "ip", "link", "set", "dev", cl.Dev, "gso_max_segs", "1")
	const port = 5201
	srv.Iperf3Server(t, port)
	cli.Iperf3Client(t, sl.Addr, port, d, "-C", "cubic")
	return cli, cl, port
}

// bulkFlow returns the flow to port with the most bytes acked (iperf3's
// data connection, not its control connection).
func bulkFlow(flows []Flow, port uint16) (Flow, bool) {
	var best Flow
	found := false
	for _, f := range flows {
		if f.Dst.Port() == port && (!found || f.BytesAcked > best.BytesAcked) {
			best, found = f, true
		}
	}
	return best, found
}

func TestSnapshotIperf3Upload(t *testing.T) {
	cli, link, port := uploadSetup(t, 8*time.Second)
	m, err := New(Options{Netns: cli.Name, Filter: Filter{Port: uint16(port), States: []uint8{StateEstablished}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	var first Flow
	deadline := time.Now().Add(5 * time.Second)
	for {
		flows, err := m.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := bulkFlow(flows, uint16(port)); ok && f.BytesAcked > 100_000 {
			first = f
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no iperf3 data flow to port %d after 5 s; flows: %+v", port, flows)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if first.CC != "cubic" || first.Cwnd == 0 || first.SRTT <= 0 || first.MSS == 0 || first.State != StateEstablished {
		t.Errorf("flow %+v: want cc cubic, cwnd > 0, srtt > 0, mss > 0, ESTABLISHED", first)
	}
	if first.Iface != link.Dev {
		t.Errorf("iface %q, want %q", first.Iface, link.Dev)
	}
	if first.Src.Addr() != netip.MustParseAddr("10.77.201.1") || first.Cookie == 0 {
		t.Errorf("src %v cookie %d", first.Src, first.Cookie)
	}
	time.Sleep(time.Second)
	flows, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	second, ok := bulkFlow(flows, uint16(port))
	if !ok || second.Cookie != first.Cookie {
		t.Fatalf("flow %d gone in the second snapshot: %+v", first.Cookie, flows)
	}
	// 1 s at 20 Mbit/s is 2.5 MB; ask for a fifth of it.
	if grown := second.BytesAcked - first.BytesAcked; grown < 500_000 {
		t.Errorf("bytes_acked grew by %d in 1 s, want >= 500000 at 20 Mbit/s", grown)
	}
	if second.BytesAcked > first.BytesAcked+4_000_000 {
		t.Errorf("bytes_acked grew by %d in 1 s: the 20 Mbit/s limit is not in effect", second.BytesAcked-first.BytesAcked)
	}

	// The same flow is filtered out by non-matching filters.
	for _, flt := range []Filter{{Port: 1}, {Iface: "lo"}, {Dst: netip.MustParsePrefix("10.77.202.0/24")}} {
		m2, err := New(Options{Netns: cli.Name, Filter: flt})
		if err != nil {
			t.Fatal(err)
		}
		fl, err := m2.Snapshot()
		m2.Close()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := bulkFlow(fl, uint16(port)); ok {
			t.Errorf("filter %+v kept the upload", flt)
		}
	}
}

func TestBadInput(t *testing.T) {
	nettest.RequireRoot(t)
	_, err := New(Options{Netns: "coopcc-no-such-netns"})
	if err == nil || !strings.Contains(err.Error(), `unknown network namespace "coopcc-no-such-netns"`) {
		t.Errorf("unknown netns: got %v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
	_, err = New(Options{Filter: Filter{States: []uint8{99}}})
	if err == nil || !strings.Contains(err.Error(), "invalid TCP state 99") {
		t.Errorf("bad state: got %v", err)
	}
	m, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if _, err := m.Snapshot(); err == nil {
		t.Error("Snapshot after Close succeeded")
	}
}

func TestTracerUpload(t *testing.T) {
	cli, _, port := uploadSetup(t, 6*time.Second)
	tr, err := NewTracer(Options{Netns: cli.Name, Filter: Filter{Port: uint16(port)}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	stop := time.AfterFunc(1500*time.Millisecond, func() { tr.Close() })
	defer stop.Stop()
	perFlow := map[uint64][]ACK{}
	var ev ACK
	n := 0
	for {
		if err := tr.Read(&ev); err != nil {
			if err != ErrTracerClosed {
				t.Fatal(err)
			}
			break
		}
		n++
		if ev.Src.Port() != uint16(port) && ev.Dst.Port() != uint16(port) {
			t.Fatalf("event of another port passed the filter: %+v", ev)
		}
		perFlow[ev.Cookie] = append(perFlow[ev.Cookie], ev)
	}
	// 20 Mbit/s of 1448-byte segments with delayed ACKs is ~850 ACKs/s.
	var bulk []ACK
	for _, evs := range perFlow {
		if len(evs) > len(bulk) {
			bulk = evs
		}
	}
	if len(bulk) < 200 {
		t.Fatalf("%d events (%d of the bulk flow) in 1.5 s, want >= 200 ACKs", n, len(bulk))
	}
	first, last := bulk[0], bulk[len(bulk)-1]
	if last.Cwnd == 0 || last.SRTT <= 0 || last.MSS == 0 || last.Src.Addr() != netip.MustParseAddr("10.77.201.1") {
		t.Errorf("event %+v: want cwnd, srtt, mss > 0 from 10.77.201.1", last)
	}
	if int32(last.SndUna-first.SndUna) < 500_000 || !last.Time.After(first.Time) {
		t.Errorf("snd_una %d -> %d, time %v -> %v: the flow did not advance", first.SndUna, last.SndUna, first.Time, last.Time)
	}
	if d := time.Since(last.Time); d < 0 || d > 10*time.Second {
		t.Errorf("event time %v is %v away from now", last.Time, d)
	}
	for i := 1; i < len(bulk); i++ {
		if int32(bulk[i].SndUna-bulk[i-1].SndUna) < 0 {
			t.Fatalf("snd_una went backwards at event %d: %d -> %d", i, bulk[i-1].SndUna, bulk[i].SndUna)
		}
	}
}

// TestSnapshotLoopbackIPv6 dumps an IPv6 loopback connection and a
// dual-stack connection to 127.0.0.1 (IPv4-mapped), checks they are
// reported with plain addresses, and that they are loopback.
func TestSnapshotLoopbackIPv6(t *testing.T) {
	ns := nettest.NewNS(t, "mon6")
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	var ports []uint16
	err := ns.Do(func() error {
		for _, addr := range []string{"[::1]:0", "[::]:0"} {
			network := "tcp6" // IPV6_V6ONLY
			if addr == "[::]:0" {
				network = "tcp" // dual stack
			}
			l, err := net.Listen(network, addr)
			if err != nil {
				return err
			}
			defer l.Close()
			port := l.Addr().(*net.TCPAddr).Port
			dst := fmt.Sprintf("[::1]:%d", port)
			if addr == "[::]:0" {
				dst = fmt.Sprintf("127.0.0.1:%d", port) // accepted on a dual-stack socket
			}
			c, err := net.Dial("tcp", dst)
			if err != nil {
				return err
			}
			s, err := l.Accept()
			if err != nil {
				return err
			}
			conns = append(conns, c, s)
			ports = append(ports, uint16(port))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Netns: ns.Name, Filter: Filter{IncludeLoopback: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	flows, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range flows {
		for _, p := range ports {
			if f.Src.Port() == p {
				got[f.Src.Addr().String()] = true
				if f.Cwnd == 0 || f.CC == "" || f.Iface != "lo" {
					t.Errorf("flow %+v: want cwnd > 0, a CC name, iface lo", f)
				}
			}
		}
	}
	if !got["::1"] || !got["127.0.0.1"] {
		t.Errorf("server ends seen %v, want ::1 and 127.0.0.1 (unmapped); flows %+v", got, flows)
	}
	m2, err := New(Options{Netns: ns.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if flows, err := m2.Snapshot(); err != nil || len(flows) != 0 {
		t.Errorf("without IncludeLoopback: %d flows (%v), want none", len(flows), err)
	}
}

const unprivEnv = "COOPCC_TEST_UNPRIV_NETNS"

// TestUnprivileged runs this test binary as nobody (setpriv, no
// capabilities) and checks the one-line errors for a namespace it may not
// enter and for loading the tracer.
func TestUnprivileged(t *testing.T) {
	if ns := os.Getenv(unprivEnv); ns != "" {
		_, err := New(Options{Netns: ns})
		fmt.Printf("monitor: %v\n", err)
		_, err = NewTracer(Options{})
		fmt.Printf("tracer: %v\n", err)
		return
	}
	nettest.RequireTool(t, "setpriv")
	ns := nettest.NewNS(t, "monunpriv")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "monitor.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
		exe, "-test.run", "^TestUnprivileged$")
	cmd.Env = append(os.Environ(), unprivEnv+"="+ns.Name)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run as nobody: %v\n%s", err, out)
	}
	for _, want := range []string{
		fmt.Sprintf("monitor: enter network namespace %q: permission denied (needs root / CAP_SYS_ADMIN)", ns.Name),
		"tracer: load tcp_probe BPF program: permission denied (run as root: needs CAP_BPF and CAP_PERFMON)",
	} {
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

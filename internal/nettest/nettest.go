// Package nettest builds throw-away network namespaces, veth links, bridges
// and HTB rate limits for integration tests, runs commands (iperf3) inside
// them, and removes everything when the test ends, even when it fails.
//
// Names are unique per process and per call (prefix-PID-counter), so tests in
// different packages can run at the same time. Everything is done with
// iproute2's `ip` and `tc`: this package is test scaffolding, not product code.
package nettest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vishvananda/netns"
)

var counter atomic.Uint32

// InCI reports whether the tests run under CI (CI=true). There, missing
// privileges or tools fail a test instead of skipping it, so a green CI run
// really ran the integration tests.
func InCI() bool { return os.Getenv("CI") != "" && os.Getenv("CI") != "false" }

// NoKernelEnv names the variable that declares a run without the kernel's
// network and BPF features: `make test-arm64` sets it for the arm64 tests
// under qemu-user, which translates no bpf(2), no sock_diag netlink and not
// every socket option, while the process still runs as root.
const NoKernelEnv = "COOPCC_TEST_NO_KERNEL"

// NoKernel reports whether the run declared itself without kernel features
// (NoKernelEnv=1).
func NoKernel() bool { return os.Getenv(NoKernelEnv) == "1" }

// RequireRoot skips the test when not running as root (fails under CI). It
// marks every test that needs the kernel's namespaces, BPF or sock_diag, so
// it also skips, CI or not, where NoKernel says those are missing.
func RequireRoot(t testing.TB) {
	t.Helper()
	if NoKernel() {
		t.Skip("needs the kernel (namespaces, BPF, sock_diag): " + NoKernelEnv + "=1, e.g. under qemu-user")
	}
	if os.Geteuid() != 0 {
		skipOrFail(t, "needs root (network namespaces, BPF)")
	}
}

// RequireSelfExec skips the test when the test binary cannot run itself as
// a child process: under qemu-user (NoKernel) without binfmt_misc an arm64
// test binary is not executable by the kernel.
func RequireSelfExec(t testing.TB) {
	t.Helper()
	if NoKernel() {
		t.Skip("re-executes the test binary, which runs under an emulator (" + NoKernelEnv + "=1)")
	}
}

// RequireTool skips the test when a program is not on PATH (fails under CI).
func RequireTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		skipOrFail(t, fmt.Sprintf("needs %s on PATH (make deps installs it)", name))
	}
}

func skipOrFail(t testing.TB, why string) {
	t.Helper()
	if InCI() {
		t.Fatal(why)
	}
	t.Skip(why)
}

// UniqueName returns prefix-PID-N, short enough for a network namespace name.
func UniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), counter.Add(1))
}

// ifName returns a unique interface name of at most 15 bytes.
func ifName(prefix string) string {
	n := fmt.Sprintf("%s%x%x", prefix, os.Getpid()&0xffff, counter.Add(1))
	if len(n) > 15 {
		n = n[len(n)-15:]
	}
	return n
}

// Run runs a command on the host and fails the test with its output on error.
func Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// NS is a named network namespace that exists for the lifetime of a test.
type NS struct {
	Name string
}

// NewNS creates a namespace named prefix-PID-N with loopback up, and
// registers its deletion (after killing every process left inside it).
func NewNS(t testing.TB, prefix string) *NS {
	t.Helper()
	RequireRoot(t)
	sweepStale()
	ns := &NS{Name: UniqueName(prefix)}
	Run(t, "ip", "netns", "add", ns.Name)
	t.Cleanup(func() { ns.destroy() })
	ns.Exec(t, "ip", "link", "set", "lo", "up")
	return ns
}

func (ns *NS) destroy() {
	if out, err := exec.Command("ip", "netns", "pids", ns.Name).Output(); err == nil {
		for _, pid := range strings.Fields(string(out)) {
			_ = exec.Command("kill", "-9", pid).Run()
		}
	}
	_ = exec.Command("ip", "netns", "del", ns.Name).Run()
}

// Exec runs a command inside the namespace and returns its combined output;
// an error fails the test.
func (ns *NS) Exec(t testing.TB, name string, args ...string) string {
	t.Helper()
	return Run(t, "ip", append([]string{"netns", "exec", ns.Name, name}, args...)...)
}

// Command returns an *exec.Cmd that runs inside the namespace.
func (ns *NS) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns.Name, name}, args...)...)
}

// Do runs fn on a locked OS thread switched into the namespace, then switches
// the thread back. Use it for in-process netlink, sockets and BPF calls.
func (ns *NS) Do(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return fmt.Errorf("get current netns: %w", err)
	}
	defer orig.Close()
	target, err := netns.GetFromName(ns.Name)
	if err != nil {
		return fmt.Errorf("open netns %s: %w", ns.Name, err)
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		return fmt.Errorf("enter netns %s: %w", ns.Name, err)
	}
	defer func() { _ = netns.Set(orig) }()
	return fn()
}

// Sysctl sets a sysctl inside the namespace (e.g. "net.ipv4.tcp_congestion_control", "cubic").
func (ns *NS) Sysctl(t testing.TB, key, value string) {
	t.Helper()
	ns.Exec(t, "sysctl", "-qw", key+"="+value)
}

// Link is one end of a veth pair.
type Link struct {
	NS   *NS
	Dev  string
	Addr string // IP address without prefix length
}

// Veth joins a and b with a veth pair, addresses each end (CIDR, e.g.
// "10.77.1.1/24") and brings both up. It returns the two ends.
func Veth(t testing.TB, a *NS, cidrA string, b *NS, cidrB string) (Link, Link) {
	t.Helper()
	da, db := ifName("va"), ifName("vb")
	Run(t, "ip", "link", "add", da, "netns", a.Name, "type", "veth", "peer", "name", db, "netns", b.Name)
	if cidrA != "" {
		a.Exec(t, "ip", "addr", "add", cidrA, "dev", da)
	}
	if cidrB != "" {
		b.Exec(t, "ip", "addr", "add", cidrB, "dev", db)
	}
	a.Exec(t, "ip", "link", "set", da, "up")
	b.Exec(t, "ip", "link", "set", db, "up")
	return Link{a, da, stripPrefix(cidrA)}, Link{b, db, stripPrefix(cidrB)}
}

func stripPrefix(cidr string) string {
	if i := strings.IndexByte(cidr, '/'); i >= 0 {
		return cidr[:i]
	}
	return cidr
}

// RateLimit puts an HTB qdisc with one class of the given rate (e.g. "20mbit")
// on the link's egress. queueLimit is the packet FIFO under the class (0 = default).
func RateLimit(t testing.TB, l Link, rate string, queueLimit int) {
	t.Helper()
	l.NS.Exec(t, "tc", "qdisc", "add", "dev", l.Dev, "root", "handle", "1:", "htb", "default", "10")
	l.NS.Exec(t, "tc", "class", "add", "dev", l.Dev, "parent", "1:", "classid", "1:10", "htb", "rate", rate, "ceil", rate)
	if queueLimit > 0 {
		l.NS.Exec(t, "tc", "qdisc", "add", "dev", l.Dev, "parent", "1:10", "handle", "10:", "pfifo", "limit", fmt.Sprint(queueLimit))
	}
}

// Bridge creates a bridge in hub and attaches each member through a veth pair.
// Members get addresses prefix.(i+1)/24 in order; the hub's bridge gets
// prefix.254/24. prefix is three octets, e.g. "10.77.3". It returns the
// members' addresses.
func Bridge(t testing.TB, hub *NS, prefix string, members ...*NS) []string {
	t.Helper()
	br := ifName("br")
	hub.Exec(t, "ip", "link", "add", br, "type", "bridge")
	hub.Exec(t, "ip", "addr", "add", prefix+".254/24", "dev", br)
	hub.Exec(t, "ip", "link", "set", br, "up")
	addrs := make([]string, len(members))
	for i, m := range members {
		addrs[i] = fmt.Sprintf("%s.%d", prefix, i+1)
		_, hubEnd := Veth(t, m, addrs[i]+"/24", hub, "")
		hub.Exec(t, "ip", "link", "set", hubEnd.Dev, "master", br)
	}
	return addrs
}

// Iperf3Server starts `iperf3 -s` in the namespace on port and stops it when
// the test ends. It waits until the port accepts connections.
func (ns *NS) Iperf3Server(t testing.TB, port int) {
	t.Helper()
	RequireTool(t, "iperf3")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := ns.Command(ctx, "iperf3", "-s", "-p", fmt.Sprint(port))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start iperf3 server in %s: %v", ns.Name, err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(ns.Exec(t, "ss", "-Htln", fmt.Sprintf("sport = :%d", port)), "LISTEN") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("iperf3 server in %s did not listen on %d: %s", ns.Name, port, out.String())
}

// Iperf3Run is an iperf3 client running in the background.
type Iperf3Run struct {
	Cmd *exec.Cmd
	out bytes.Buffer
}

// Wait waits for the client to exit and returns its output (the JSON report).
func (r *Iperf3Run) Wait() (string, error) {
	err := r.Cmd.Wait()
	return r.out.String(), err
}

// Iperf3Client starts an iperf3 upload (-J) to server:port for the given
// duration in the background; extra arguments are appended (e.g. "-C",
// "cubic"). It is killed when the test ends if still running.
func (ns *NS) Iperf3Client(t testing.TB, server string, port int, d time.Duration, extra ...string) *Iperf3Run {
	t.Helper()
	RequireTool(t, "iperf3")
	secs := fmt.Sprintf("%.1f", d.Seconds())
	args := append([]string{"-c", server, "-p", fmt.Sprint(port), "-t", secs, "-J"}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	r := &Iperf3Run{Cmd: ns.Command(ctx, "iperf3", args...)}
	r.Cmd.Stdout, r.Cmd.Stderr = &r.out, &r.out
	if err := r.Cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start iperf3 client in %s: %v", ns.Name, err)
	}
	t.Cleanup(func() {
		cancel()
		if r.Cmd.ProcessState == nil {
			_ = r.Cmd.Wait()
		}
	})
	return r
}

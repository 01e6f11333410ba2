package monitor

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/internal/nettest"
	"golang.org/x/sys/unix"
)

// benchEhash is net.ipv4.tcp_child_ehash_entries for the benchmark
// namespaces (COOPCC_BENCH_EHASH; default 0 = share the host's table, the
// kernel default). The dump walks the whole established hash table, so a
// namespace with its own small table is cheaper to dump.
func benchEhash() string {
	if v := os.Getenv("COOPCC_BENCH_EHASH"); v != "" {
		return v
	}
	return "0"
}

const childEhashPath = "/proc/sys/net/ipv4/tcp_child_ehash_entries"

// loopbackNS creates a namespace (with tcp_child_ehash_entries = ehash,
// restored on the host right after) holding n established loopback
// connections, i.e. 2n established sockets plus one listener, all kept
// open by this process until the benchmark ends.
func loopbackNS(b *testing.B, n int, ehash string) *nettest.NS {
	b.Helper()
	nettest.RequireRoot(b)
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
	if need := uint64(n + 1024); lim.Cur < need {
		lim.Cur = need
		lim.Max = max(lim.Max, need)
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			b.Fatalf("raise RLIMIT_NOFILE to %d: %v", need, err)
		}
	}
	old, err := os.ReadFile(childEhashPath)
	if err != nil {
		b.Fatalf("read %s: %v", childEhashPath, err)
	}
	if err := os.WriteFile(childEhashPath, []byte(ehash), 0o644); err != nil {
		b.Fatalf("set tcp_child_ehash_entries=%s: %v", ehash, err)
	}
	ns := nettest.NewNS(b, "monbench")
	if err := os.WriteFile(childEhashPath, old, 0o644); err != nil {
		b.Fatalf("restore tcp_child_ehash_entries: %v", err)
	}
	var fds []int
	b.Cleanup(func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	})
	// The client ends live in a helper process (this test binary, re-run
	// inside the namespace) so that neither process needs more than ~n
	// descriptors: RLIMIT_NOFILE's hard limit may be below 2n.
	err = ns.Do(func() error {
		lfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		fds = append(fds, lfd)
		if err := unix.Bind(lfd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: 5001}); err != nil {
			return fmt.Errorf("bind: %w", err)
		}
		if err := unix.Listen(lfd, 4096); err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^TestLoopbackDialer$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", dialerEnv, n))
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start dialer: %w", err)
		}
		b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
		for i := 0; i < n; i++ {
			afd, _, err := unix.Accept4(lfd, unix.SOCK_CLOEXEC)
			if err != nil {
				return fmt.Errorf("accept %d: %w", i, err)
			}
			fds = append(fds, afd)
		}
		return nil
	})
	if err != nil {
		b.Fatalf("open %d loopback connections in %s: %v", n, ns.Name, err)
	}
	return ns
}

// runSS runs `ss -tin` inside ns (forked from a thread switched into the
// namespace, so no `ip netns exec` in between) with output to /dev/null
// and returns its wall time.
func runSS(ns *nettest.NS, devnull *os.File) (time.Duration, error) {
	var d time.Duration
	err := ns.Do(func() error {
		cmd := exec.Command("ss", "-tin")
		cmd.Stdout = devnull
		start := time.Now()
		err := cmd.Run()
		d = time.Since(start)
		return err
	})
	return d, err
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func benchSizes() []int {
	if v := os.Getenv("COOPCC_BENCH_CONNS"); v != "" {
		var out []int
		for _, s := range strings.Split(v, ",") {
			n, err := strconv.Atoi(s)
			if err == nil && n > 0 {
				out = append(out, n)
			}
		}
		return out
	}
	return []int{1, 100, 1000, 10000}
}

// BenchmarkDumpVsSS dumps n established loopback connections (2n sockets)
// with Snapshot and with `ss -tin` in the same namespace and run, and
// reports the medians and their ratio.
func BenchmarkDumpVsSS(b *testing.B) {
	nettest.RequireTool(b, "ss")
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	ehash := benchEhash()
	for _, n := range benchSizes() {
		ns := loopbackNS(b, n, ehash)
		b.Run(fmt.Sprintf("conns=%d", n), func(b *testing.B) {
			m, err := New(Options{Netns: ns.Name, Filter: Filter{IncludeLoopback: true}})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			var mon, ss []time.Duration
			for b.Loop() {
				mon, ss = mon[:0], ss[:0]
				// Interleave so both see the same machine load.
				for i := 0; i < 15; i++ {
					start := time.Now()
					flows, err := m.Snapshot()
					mon = append(mon, time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
					if len(flows) != 2*n {
						b.Fatalf("dumped %d flows, want %d", len(flows), 2*n)
					}
					d, err := runSS(ns, devnull)
					if err != nil {
						b.Fatalf("ss -tin: %v", err)
					}
					ss = append(ss, d)
				}
			}
			mm, sm := median(mon), median(ss)
			b.ReportMetric(float64(mm.Microseconds())/1e3, "monitor-ms")
			b.ReportMetric(float64(sm.Microseconds())/1e3, "ss-ms")
			b.ReportMetric(float64(sm)/float64(mm), "ratio")
			b.Logf("conns=%d sockets=%d tcp_child_ehash_entries=%s: monitor %v, ss -tin %v (median of 15), ss/monitor = %.1fx",
				n, 2*n, ehash, mm, sm, float64(sm)/float64(mm))
		})
	}
}

// BenchmarkSnapshot is the plain per-dump cost (ns/op, allocs/op) at each
// size of COOPCC_BENCH_CONNS (default 1, 100, 1000, 10000 connections).
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range benchSizes() {
		ns := loopbackNS(b, n, benchEhash())
		b.Run(fmt.Sprintf("conns=%d", n), func(b *testing.B) {
			m, err := New(Options{Netns: ns.Name, Filter: Filter{IncludeLoopback: true}})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Snapshot(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMonitor2Hz runs what `coopcc mon --record` does (Snapshot,
// throughput tracking, CSV formatting) every 500 ms over COOPCC_BENCH_CPU_FLOWS
// flows (default 1,000: 500 loopback connections, both ends are flows) for
// COOPCC_BENCH_CPU_SECONDS (default 20) and reports the process's CPU time
// (user + system, getrusage RUSAGE_SELF) as a share of one core.
func BenchmarkMonitor2Hz(b *testing.B) {
	secs := 20
	if v, err := strconv.Atoi(os.Getenv("COOPCC_BENCH_CPU_SECONDS")); err == nil && v > 0 {
		secs = v
	}
	flowsWanted := 1000
	if v, err := strconv.Atoi(os.Getenv("COOPCC_BENCH_CPU_FLOWS")); err == nil && v >= 2 {
		flowsWanted = v
	}
	ns := loopbackNS(b, flowsWanted/2, benchEhash())
	m, err := New(Options{Netns: ns.Name, Filter: Filter{IncludeLoopback: true}})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	w := NewCSVWriter(io.Discard, ns.Name)
	rates := NewRateTracker()
	for b.Loop() {
		var r0, r1 unix.Rusage
		_ = unix.Getrusage(unix.RUSAGE_SELF, &r0)
		start := time.Now()
		tick := time.NewTicker(500 * time.Millisecond)
		polls := 0
		for time.Since(start) < time.Duration(secs)*time.Second {
			now := time.Now()
			flows, err := m.Snapshot()
			if err != nil {
				b.Fatal(err)
			}
			if len(flows) != flowsWanted/2*2 {
				b.Fatalf("%d flows, want %d", len(flows), flowsWanted/2*2)
			}
			rates.Update(now, flows)
			if err := w.Write(now, flows); err != nil {
				b.Fatal(err)
			}
			polls++
			<-tick.C
		}
		tick.Stop()
		_ = unix.Getrusage(unix.RUSAGE_SELF, &r1)
		wall := time.Since(start)
		cpu := time.Duration(r1.Utime.Nano()-r0.Utime.Nano()) + time.Duration(r1.Stime.Nano()-r0.Stime.Nano())
		pct := 100 * cpu.Seconds() / wall.Seconds()
		b.ReportMetric(pct, "%cpu")
		b.Logf("2 Hz monitor of %d flows (tcp_child_ehash_entries=%s): %d polls in %v, CPU %v = %.3f%% of one core",
			flowsWanted/2*2, benchEhash(), polls, wall.Round(time.Millisecond), cpu, pct)
	}
}

const dialerEnv = "COOPCC_BENCH_DIALER"

// TestLoopbackDialer is the helper process of loopbackNS: with
// COOPCC_BENCH_DIALER=n it opens n connections to 127.0.0.1:5001 and holds
// them until its stdin closes. Without the variable it does nothing.
func TestLoopbackDialer(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv(dialerEnv))
	if err != nil {
		t.Skip("helper process for the benchmarks")
	}
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < uint64(n+1024) {
		lim.Cur = min(lim.Max, uint64(n+1024))
		_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
	}
	for i := 0; i < n; i++ {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("socket %d: %v", i, err)
		}
		if err := unix.Connect(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: 5001}); err != nil {
			t.Fatalf("connect %d: %v", i, err)
		}
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
}

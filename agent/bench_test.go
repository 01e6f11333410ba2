package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/agent"
	"github.com/coopcc/coopcc/internal/nettest"
)

// procCPU returns the process's user+system CPU time.
func procCPU(t testing.TB, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name "(...)": state is field 3; utime 14, stime 15.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	const clkTck = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / clkTck
}

// procMem returns VmRSS, VmHWM, RssAnon and RssFile in bytes.
func procMem(t testing.TB, pid int) (rss, hwm, anon, file float64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = v * 1024
		case "VmHWM:":
			hwm = v * 1024
		case "RssAnon:":
			anon = v * 1024
		case "RssFile:":
			file = v * 1024
		}
	}
	return rss, hwm, anon, file
}

// BenchmarkAgent100Flows measures the agent's CPU share and memory while it
// manages 100 uploading TCP flows (iperf3 -P 100 over a 100 Mbit/s HTB
// veth) at the default 0.5 s monitor interval, with the coop policy.
// Targets: ≤ 1 % of one core, ≤ 30 MB RSS. Run with
//
//	go test ./agent -run '^$' -bench Agent100Flows -benchtime 1x
func BenchmarkAgent100Flows(b *testing.B) {
	nettest.RequireRoot(b)
	nettest.RequireTool(b, "iperf3")
	bin := nettest.CoopccBinary(b)
	dir := b.TempDir()
	key := filepath.Join(dir, "group.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("a5", 32)), 0o600); err != nil {
		b.Fatal(err)
	}
	cli, srv := nettest.NewNS(b, "agbc"), nettest.NewNS(b, "agbs")
	l, _ := nettest.Veth(b, cli, "10.77.214.1/24", srv, "10.77.214.2/24")
	nettest.RateLimit(b, l, "100mbit", 0)
	a := startAgent(b, bin, cli, dir, "--iface", l.Dev, "--key-file", key, "--policy", "coop", "--monitor-interval", "500ms")
	a.waitStatus(b, 30*time.Second, "agent up", func(agent.StatusReport) bool { return true })
	srv.Iperf3Server(b, 5201)
	const warm, window = 5 * time.Second, 30 * time.Second
	cli.Iperf3Client(b, "10.77.214.2", 5201, warm+window+5*time.Second, "-P", "100")
	r := a.waitStatus(b, 20*time.Second, "100 active flows", func(r agent.StatusReport) bool { return r.Own.ActiveFlows >= 100 })
	time.Sleep(warm)
	pid := a.cmd.Process.Pid
	c0, t0 := procCPU(b, pid), time.Now()
	b.ResetTimer()
	time.Sleep(window)
	b.StopTimer()
	cpu := float64(procCPU(b, pid)-c0) / float64(time.Since(t0))
	rss, hwm, anon, file := procMem(b, pid)
	r = a.waitStatus(b, 5*time.Second, "status", func(agent.StatusReport) bool { return true })
	b.ReportMetric(100*cpu, "%core")
	b.ReportMetric(rss/1e6, "RSS_MB")
	b.ReportMetric(hwm/1e6, "peakRSS_MB")
	b.ReportMetric(anon/1e6, "anonRSS_MB")
	b.ReportMetric(file/1e6, "fileRSS_MB")
	b.ReportMetric(float64(len(r.Flows)), "managed_flows")
	b.ReportMetric(float64(r.TickTimeUs), "tick_µs")
	b.Logf("flows %d (active %d), ticks %d, last tick %v, CPU %.2f%% of a core over %v, RSS %.1f MB (anonymous %.1f, file %.1f; peak %.1f MB)",
		len(r.Flows), r.Own.ActiveFlows, r.Counts.Ticks, time.Duration(r.TickTimeUs)*time.Microsecond, 100*cpu, window, rss/1e6, anon/1e6, file/1e6, hwm/1e6)
}

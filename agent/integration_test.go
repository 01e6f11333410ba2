package agent_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coopcc/coopcc/agent"
	"github.com/coopcc/coopcc/internal/nettest"
	"github.com/coopcc/coopcc/monitor"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ifaceWith returns the name of the interface in ns that holds addr.
func ifaceWith(t testing.TB, ns *nettest.NS, addr string) string {
	t.Helper()
	for _, line := range strings.Split(ns.Exec(t, "ip", "-o", "-4", "addr", "show"), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && strings.HasPrefix(f[3], addr+"/") {
			return f[1]
		}
	}
	t.Fatalf("no interface with %s in %s", addr, ns.Name)
	return ""
}

// runningAgent is a `coopcc agent` process inside a namespace.
type runningAgent struct {
	ns     *nettest.NS
	cmd    *exec.Cmd
	sock   string
	events string
	mu     sync.Mutex
	out    bytes.Buffer
	done   chan struct{}
}

func (r *runningAgent) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.Write(p)
}

func (r *runningAgent) logs() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

func startAgent(t testing.TB, bin string, ns *nettest.NS, dir string, args ...string) *runningAgent {
	t.Helper()
	r := &runningAgent{ns: ns, sock: filepath.Join(dir, ns.Name+".sock"), events: filepath.Join(dir, ns.Name+".jsonl"), done: make(chan struct{})}
	full := append([]string{"agent", "--status-socket", r.sock, "--lock-dir", dir, "--events", r.events,
		"--metrics-addr", "127.0.0.1:9477", "--log-format", "json"}, args...)
	r.cmd = ns.Command(context.Background(), bin, full...)
	r.cmd.Stdout, r.cmd.Stderr = r, r
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("start agent in %s: %v", ns.Name, err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.done
		}
		if t.Failed() {
			t.Logf("agent %s log:\n%s", ns.Name, r.logs())
		}
	})
	return r
}

// waitStatus polls the agent's status until ok returns true.
func (r *runningAgent) waitStatus(t testing.TB, d time.Duration, what string, ok func(agent.StatusReport) bool) agent.StatusReport {
	t.Helper()
	deadline := time.Now().Add(d)
	var last agent.StatusReport
	var err error
	for time.Now().Before(deadline) {
		select {
		case <-r.done:
			t.Fatalf("agent in %s exited while waiting for %s:\n%s", r.ns.Name, what, r.logs())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		last, err = agent.QueryStatus(ctx, r.sock)
		cancel()
		if err == nil && ok(last) {
			return last
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("agent in %s: %s not reached within %v (last status %+v, err %v)", r.ns.Name, what, d, last, err)
	return last
}

func writePolicy(t testing.TB, path string, hi int) {
	t.Helper()
	body := fmt.Sprintf("[policy]\nname = \"static\"\n[policy.params]\nstatic_hi = %d\n", hi)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// metrics fetches /metrics from 127.0.0.1:9477 inside the namespace: the
// connection is made on a thread switched into it.
func (r *runningAgent) metrics(t testing.TB) string {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := r.ns.Do(func() error {
			var err error
			c, err = net.DialTimeout("tcp", "127.0.0.1:9477", 2*time.Second)
			return err
		})
		return c, err
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://agent/metrics")
	if err != nil {
		t.Fatalf("metrics of %s: %v", r.ns.Name, err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestThreeAgentsOnABridge runs the real binary in three station namespaces
// on one bridge, each uploading with iperf3 to a server namespace: every
// agent counts N = 3, the flows' cwnd stays within the bounds, /metrics is
// valid Prometheus text, a second agent in a namespace is refused, and after
// SIGKILL of one agent its flow is unbounded again within the lease.
func TestThreeAgentsOnABridge(t *testing.T) {
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	bin := nettest.CoopccBinary(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "group.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("5a", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	cfgFile := filepath.Join(dir, "agent3.toml")
	srv := nettest.NewNS(t, "agsrv")
	stas := []*nettest.NS{nettest.NewNS(t, "agsta"), nettest.NewNS(t, "agsta"), nettest.NewNS(t, "agsta")}
	addrs := nettest.Bridge(t, srv, "10.77.213", stas...)
	const hi, monitorEvery = 10, 200 * time.Millisecond
	agents := make([]*runningAgent, len(stas))
	devs := make([]string, len(stas))
	for i, s := range stas {
		devs[i] = ifaceWith(t, s, addrs[i])
		// A 20 Mbit/s bottleneck with a long FIFO: unbounded CUBIC grows
		// its cwnd far beyond hi.
		nettest.RateLimit(t, nettest.Link{NS: s, Dev: devs[i], Addr: addrs[i]}, "20mbit", 1000)
		args := []string{"--iface", devs[i], "--key-file", key, "--group", "itest", "--monitor-interval", monitorEvery.String()}
		if i < 2 {
			args = append(args, "--policy", "static", "--param", fmt.Sprintf("static_hi=%d", hi))
		} else {
			// The third takes its policy from a file, to be reloaded by SIGHUP.
			writePolicy(t, cfgFile, hi)
			args = append(args, "--config", cfgFile)
		}
		agents[i] = startAgent(t, bin, s, dir, args...)
	}
	for _, a := range agents {
		a.waitStatus(t, 30*time.Second, "agent up", func(agent.StatusReport) bool { return true })
	}

	// A second agent in the same namespace refuses to start.
	out, err := stas[0].Command(context.Background(), bin, "agent", "--iface", devs[0], "--key-file", key,
		"--lock-dir", dir, "--status-socket", filepath.Join(dir, "second.sock")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already running") {
		t.Fatalf("second agent in %s: err %v, output %s", stas[0].Name, err, out)
	}

	const upload = 25 * time.Second
	for i, s := range stas {
		srv.Iperf3Server(t, 5201+i)
		s.Iperf3Client(t, "10.77.213.254", 5201+i, upload)
	}

	// Every agent counts N = 3.
	start := time.Now()
	for _, a := range agents {
		a.waitStatus(t, 10*time.Second, "N = 3", func(r agent.StatusReport) bool { return r.N == 3 })
	}
	t.Logf("all agents at N = 3 after %v", time.Since(start).Round(time.Millisecond))

	// The datapath reports the upper bound applied on every terminal; from
	// a monitor interval after that (a status's cwnd is the last monitor
	// sample, which may predate the first clamped ACK) the flows' cwnd
	// respects the bound, sampled for 2 s, and each agent sees its upload
	// (active).
	for i, a := range agents {
		r := a.waitStatus(t, 5*time.Second, "bound hits", func(r agent.StatusReport) bool {
			return len(r.Hits) > 0 && r.Hits[0].HiHits > 0
		})
		if r.Backend == "" || r.Policy != "static" || !r.PolicyOn {
			t.Fatalf("%s: status %+v", stas[i].Name, r)
		}
	}
	time.Sleep(2 * monitorEvery)
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(monitorEvery) {
		for i, a := range agents {
			r := a.waitStatus(t, 5*time.Second, "status", func(agent.StatusReport) bool { return true })
			active := 0
			for _, f := range r.Flows {
				if f.Hi != hi {
					t.Fatalf("%s: flow %s→%s has hi %d, want %d", stas[i].Name, f.Src, f.Dst, f.Hi, hi)
				}
				if f.Cwnd > hi {
					t.Fatalf("%s: flow %s→%s cwnd %d exceeds the bound %d", stas[i].Name, f.Src, f.Dst, f.Cwnd, hi)
				}
				if f.Active {
					active++
				}
			}
			if active == 0 {
				t.Fatalf("%s: no active managed flow: %+v", stas[i].Name, r.Flows)
			}
		}
	}

	// /metrics is valid Prometheus text and agrees with the status.
	text := agents[1].metrics(t)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("/metrics is not valid Prometheus text: %v\n%s", err, text)
	}
	if n := fams["coopcc_peers_n"].GetMetric()[0].GetGauge().GetValue(); n != 3 {
		t.Fatalf("coopcc_peers_n = %v, want 3", n)
	}
	for _, m := range fams["coopcc_flow_cwnd_segments"].GetMetric() {
		if v := m.GetGauge().GetValue(); v > hi {
			t.Fatalf("coopcc_flow_cwnd_segments %v > %d", v, hi)
		}
	}
	if len(fams["coopcc_protocol_messages_total"].GetMetric()) == 0 {
		t.Fatal("no protocol message counters")
	}

	// `coopcc agent status --json` (the CLI) inside the namespace, default
	// output parsed back.
	js, err := stas[1].Command(context.Background(), bin, "agent", "status", "--json", "--status-socket", agents[1].sock).Output()
	if err != nil {
		t.Fatalf("coopcc agent status --json: %v", err)
	}
	var sr agent.StatusReport
	if err := json.Unmarshal(js, &sr); err != nil || sr.N != 3 || sr.Backend == "" || len(sr.Peers) != 2 {
		t.Fatalf("status --json: %v %+v", err, sr)
	}
	txt, err := stas[1].Command(context.Background(), bin, "agent", "status", "--status-socket", agents[1].sock).Output()
	if err != nil || !strings.Contains(string(txt), "datapath backend") || !strings.Contains(string(txt), "static (bounding)") {
		t.Fatalf("coopcc agent status: %v\n%s", err, txt)
	}

	// SIGHUP reloads the file: the third agent moves to the new bound.
	const hi2 = 6
	writePolicy(t, cfgFile, hi2)
	if err := agents[2].cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	agents[2].waitStatus(t, 5*time.Second, "reloaded bound", func(r agent.StatusReport) bool {
		for _, b := range r.Bounds {
			if b.Dst == "10.77.213.254" && b.Hi == hi2 {
				return r.Counts.Reloads == 1 && len(r.Flows) > 0 && r.Flows[0].Hi == hi2
			}
		}
		return false
	})

	// The events file has the bound change, in the documented format.
	ev, err := os.ReadFile(agents[2].events)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(ev), "\n")
	if !strings.Contains(first, `"dst":"10.77.213.254","lo":0,"hi":10,`) || !strings.Contains(first, `"policy":"static"`) {
		t.Fatalf("events: %s", ev)
	}
	if !strings.Contains(string(ev), `"hi":6,`) {
		t.Fatalf("no event for the reloaded bound: %s", ev)
	}

	// SIGKILL the first agent: its flow's cwnd grows past the old bound
	// within the lease (3 s) plus a margin, seen through the monitor.
	mon, err := monitor.New(monitor.Options{Netns: stas[0].Name, Filter: monitor.Filter{Port: 5201}})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	if err := agents[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var maxCwnd uint32
	for time.Since(killed) < 3*time.Second+3*time.Second && maxCwnd <= hi {
		flows, err := mon.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range flows {
			if f.Unacked > 0 && f.Cwnd > maxCwnd {
				maxCwnd = f.Cwnd
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if maxCwnd <= hi {
		t.Fatalf("after SIGKILL of the agent the flow stayed at cwnd %d ≤ %d for 6 s", maxCwnd, hi)
	}
	t.Logf("after SIGKILL: cwnd %d > %d after %v", maxCwnd, hi, time.Since(killed).Round(time.Millisecond))

	// The others stop counting it once it expires.
	for _, a := range agents[1:] {
		a.waitStatus(t, 5*time.Second, "N = 2", func(r agent.StatusReport) bool { return r.N == 2 })
	}
	for _, a := range agents[1:] {
		sc := bufio.NewScanner(strings.NewReader(a.logs()))
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"level":"ERROR"`) {
				t.Errorf("%s logged an error: %s", a.ns.Name, sc.Text())
			}
		}
	}
}

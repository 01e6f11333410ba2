package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/internal/nettest"
	"github.com/coopcc/coopcc/internal/pidlock"
	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/lab/testbed"
	"github.com/coopcc/coopcc/schema"
)

func ownNamespaces(t *testing.T) []string {
	t.Helper()
	ls, err := testbed.Leftovers()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range ls {
		if l.OwnerPID == os.Getpid() {
			out = append(out, l.Name)
		}
	}
	return out
}

// TestRunnerCancelTearsDown cancels a run in the middle (what Ctrl-C does)
// and checks that every namespace and process is gone and the partial
// results are recorded.
func TestRunnerCancelTearsDown(t *testing.T) {
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	bin := nettest.CoopccBinary(t)
	s, err := scenario.Parse([]byte(`
name = "cancel"
modes = ["cubic", "reno"]
[terminals]
count = 3
[traffic]
duration = "30s"
`))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(3*time.Second, cancel)
	t0 := time.Now()
	_, err = RunScenario(ctx, s, RunnerConfig{Out: out, Backend: testbed.BackendVeth, Coopcc: bin})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("want an interrupted error, got %v", err)
	}
	if took := time.Since(t0); took > 20*time.Second {
		t.Errorf("cancel took %v to tear down", took)
	}
	if ns := ownNamespaces(t); len(ns) > 0 {
		t.Errorf("namespaces left after cancel: %v", ns)
	}
	var meta schema.Meta
	readJSON(t, filepath.Join(out, "meta.json"), &meta)
	if !meta.Interrupted || len(meta.Runs) != 1 || meta.End.IsZero() {
		t.Errorf("meta after cancel: interrupted=%v runs=%v end=%v", meta.Interrupted, meta.Runs, meta.End)
	}
	var rr schema.Run
	readJSON(t, filepath.Join(out, "runs", "mode=cubic,n=3,delay=0ms,rep=1", "run.json"), &rr)
	if rr.Valid || rr.InvalidReason != "interrupted" {
		t.Errorf("interrupted run: valid=%v reason=%q", rr.Valid, rr.InvalidReason)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// csvRows returns the header and rows of a CSV file.
func csvRows(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var header []string
	var rows [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), ",")
		if header == nil {
			header = fs
			continue
		}
		rows = append(rows, fs)
	}
	return header, rows
}

// TestRunnerVeth runs a short two-mode scenario over the veth backend (no
// emulator) and checks the results layout, iperf3 output and flows.csv.
func TestRunnerVeth(t *testing.T) {
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	bin := nettest.CoopccBinary(t)
	s, err := scenario.Parse([]byte(`
name = "vethrun"
modes = ["cubic", "reno"]
[terminals]
count = 2
stagger = "1s"
[traffic]
duration = "3s"
`))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum, err := RunScenario(ctx, s, RunnerConfig{Out: out, Backend: testbed.BackendVeth, Coopcc: bin, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Runs != 2 || sum.Failed != 0 {
		t.Fatalf("runs %d failed %d", sum.Runs, sum.Failed)
	}
	for _, mode := range []string{"cubic", "reno"} {
		dir := filepath.Join(out, "runs", "mode="+mode+",n=2,delay=0ms,rep=1")
		var rr schema.Run
		readJSON(t, filepath.Join(dir, "run.json"), &rr)
		if !rr.Valid || rr.Backend != testbed.BackendVeth || rr.SampleHz < 10 || len(rr.GoodputBps) != 2 {
			t.Errorf("%s run.json: %+v", mode, rr)
		}
		if rr.Sysctls["sta1"]["net.ipv4.tcp_no_metrics_save"] != "1" {
			t.Errorf("%s: sysctls not recorded: %v", mode, rr.Sysctls["sta1"])
		}
		checkFlowsCSV(t, filepath.Join(dir, "flows.csv"), rr)
		// The data flows run the mode's CC (iperf3 -C), not the host's bbr.
		header, rows := csvRows(t, filepath.Join(dir, "flows.csv"))
		ccCol, dstCol := -1, -1
		for i, h := range header {
			switch h {
			case "cc":
				ccCol = i
			case "dst":
				dstCol = i
			}
		}
		seen := false
		for _, r := range rows {
			if r[ccCol] == mode && strings.HasPrefix(r[dstCol], "10.77.200.254:") {
				seen = true
			}
		}
		if !seen {
			t.Errorf("%s: no flow with cc %s in flows.csv", mode, mode)
		}
	}
}

// checkFlowsCSV checks the header and that every station's flows were
// sampled at >= 10 Hz over its flow's life.
func checkFlowsCSV(t *testing.T, path string, rr schema.Run) {
	t.Helper()
	header, rows := csvRows(t, path)
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, need := range []string{"t_s", "netns", "src", "dst", "cc", "cwnd", "ssthresh", "mss", "srtt_us", "rttvar_us", "min_rtt_us", "ca_state", "retrans", "total_retrans", "lost", "unacked", "bytes_acked", "delivery_rate_Bps", "app_limited"} {
		if _, ok := col[need]; !ok {
			t.Fatalf("%s: no column %s in %v", path, need, header)
		}
	}
	times := map[string]map[string]bool{} // station -> distinct sample times
	for _, r := range rows {
		st := r[col["netns"]]
		if times[st] == nil {
			times[st] = map[string]bool{}
		}
		times[st][r[col["t_s"]]] = true
	}
	for _, st := range rr.Stations {
		ts := times[st.Name]
		var lo, hi float64
		for k := range ts {
			v, _ := strconv.ParseFloat(k, 64)
			if lo == 0 || v < lo {
				lo = v
			}
			hi = max(hi, v)
		}
		if len(ts) < 10 || hi <= lo {
			t.Errorf("%s: %d samples of %s", rr.ID, len(ts), st.Name)
			continue
		}
		if hz := float64(len(ts)-1) / (hi - lo); hz < 10 {
			t.Errorf("%s: %s sampled at %.1f Hz, want >= 10", rr.ID, st.Name, hz)
		}
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) { l.t.Log(string(p)); return len(p), nil }

func TestSecondEmulatorRunRefused(t *testing.T) {
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	lockPath := filepath.Join(t.TempDir(), "lab.lock")
	held, err := pidlock.Acquire(lockPath, false)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	s, err := scenario.Load("tiny")
	if err != nil {
		t.Fatal(err)
	}
	_, err = RunScenario(context.Background(), s, RunnerConfig{Out: t.TempDir(), Backend: testbed.BackendEmu, Coopcc: "/bin/true", Lock: lockPath})
	if err == nil || !strings.Contains(err.Error(), "another lab run is in progress") || !strings.Contains(err.Error(), "--wait") || !strings.Contains(err.Error(), "--lock") {
		t.Fatalf("error %v, want a refusal that names --wait and --lock", err)
	}
}

// A client still running after its schedule is killed after the grace plus
// 16 of its largest RTTs, read when the schedule ends, and the cause says
// so; one that ends in time is left alone.
func TestKillLateScalesWithTheRTT(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	rtt := 5 * time.Millisecond
	start := time.Now()
	go killLate(ctx, cancel, 20*time.Millisecond, 10*time.Millisecond, func() time.Duration { return rtt })
	<-ctx.Done()
	el := time.Since(start)
	if el < 110*time.Millisecond { // 20 + 10 + 16 × 5 ms
		t.Fatalf("killed after %v, want >= 110 ms", el)
	}
	if c := context.Cause(ctx); c == nil || !strings.Contains(c.Error(), "16 × its largest RTT, 5ms") {
		t.Fatalf("cause %v", c)
	}

	ctx2, cancel2 := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	go func() {
		killLate(ctx2, cancel2, 10*time.Millisecond, time.Hour, func() time.Duration { return 0 })
		close(done)
	}()
	time.Sleep(30 * time.Millisecond)
	cancel2(nil) // the client exited
	<-done
	if context.Cause(ctx2) != context.Canceled {
		t.Fatalf("cause %v, want plain cancellation", context.Cause(ctx2))
	}
}

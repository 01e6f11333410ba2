package results

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/lab/analysis"
	"github.com/coopcc/coopcc/schema"
)

const fixture = "testdata/results"

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

func TestLoadFixture(t *testing.T) {
	res, err := Load(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 5 {
		t.Fatalf("%d runs, want 5", len(res.Runs))
	}
	if res.Meta["git_revision"] != "0123456789ab" || !strings.Contains(res.Scenario, "fixture") {
		t.Errorf("meta %v scenario %q", res.Meta, res.Scenario)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("complete fixture gave warnings: %v", res.Warnings)
	}
	var cubic2 analysis.Run
	for _, r := range res.Runs {
		if r.Info.ID == "mode=cubic,n=2,delay=4ms,rep=1" {
			cubic2 = r
		}
	}
	if cubic2.Info.Mode != "cubic" || cubic2.Info.N != 2 || cubic2.Info.DelayMS != 4 || len(cubic2.Info.Stations) != 2 {
		t.Fatalf("run info %+v", cubic2.Info)
	}
	if cubic2.T0 != 1795316400 || len(cubic2.Flows) != 4 || cubic2.Flows[0].Samples[0].T != 0 {
		t.Errorf("T0 %f, %d flows, first t %g: want Unix times rebased to 0 and 4 flows (2 data + 2 control)", cubic2.T0, len(cubic2.Flows), cubic2.Flows[0].Samples[0].T)
	}
	ip := cubic2.Iperf["sta1"]
	// intervals 14,15,16,16,15,16 Mbit/s over 3 s, receiver got 99 %.
	if want := 92.0 / 6 * 0.99; !near(ip.GoodputMbps(), want) || len(ip.Intervals) != 6 || ip.Reverse {
		t.Errorf("sta1 goodput %g (want %g), %d intervals", ip.GoodputMbps(), want, len(ip.Intervals))
	}
	if s := cubic2.Emu; s == nil || s.Status == nil || !s.Status.Valid || len(s.Stations) != 3 || len(s.Queue) != 31 {
		t.Errorf("emu %+v", s)
	}

	rs := analysis.Summarize(cubic2, analysis.DefaultLossRule())
	sta2 := rs.Stations[1]
	if sta2.DataFlows != 1 || sta2.Retrans != 3 || sta2.Timeouts != 1 || len(sta2.LossEvents) != 1 {
		t.Fatalf("sta2 summary %+v", sta2)
	}
	e := sta2.LossEvents[0]
	// collapse 30 → 1 at 1.5 s, back at 30 by 2.3 s; 9 Mbit/s before, 32/9 during.
	if !near(e.T, 1.5) || e.CwndBefore != 30 || !e.Rebuilt || !near(e.RebuildS, 0.8) ||
		!near(e.PreMbps, 9) || !near(e.DuringMbps, 32.0/9) || e.Class != analysis.Penalizing || e.SRTT.Milliseconds() != 46 {
		t.Errorf("loss event %+v", e)
	}

	var coop2 analysis.Run
	for _, r := range res.Runs {
		if r.Info.ID == "mode=coop,n=2,delay=4ms,rep=2" {
			coop2 = r
		}
	}
	if len(coop2.Bounds["sta2"]) != 1 || coop2.Bounds["sta2"][0].Hi != 8 {
		t.Errorf("bounds %+v", coop2.Bounds)
	}
	if got := coop2.RunTime(coop2.Bounds["sta2"][0].T); math.IsNaN(got) {
		t.Errorf("bound event run time NaN")
	}
	if s := analysis.Summarize(coop2, analysis.DefaultLossRule()); s.Valid || !strings.Contains(s.InvalidReason, "emulator") {
		t.Errorf("invalid run summarized as valid=%v %q", s.Valid, s.InvalidReason)
	}
}

// copyRun copies one fixture run into a fresh results directory.
func copyRun(t *testing.T, id string) (root, run string) {
	t.Helper()
	root = t.TempDir()
	return root, copyRunInto(t, root, id)
}

// copyRunInto copies the fixture's run id into root/runs and returns its path.
func copyRunInto(t *testing.T, root, id string) (run string) {
	t.Helper()
	run = filepath.Join(root, "runs", id)
	src := filepath.Join(fixture, "runs", id)
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(run, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(run, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func TestLoadToleratesMissingOptionalParts(t *testing.T) {
	root, run := copyRun(t, "mode=cubic,n=2,delay=4ms,rep=1")
	for _, p := range []string{"flows.csv", "emu", "iperf3"} {
		if err := os.RemoveAll(filepath.Join(run, p)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Load(root)
	if err != nil {
		t.Fatalf("Load without optional parts: %v", err)
	}
	// A single run without run.json (LoadRun; Load skips such runs as in
	// progress) takes mode, n, delay and rep from its directory name.
	if err := os.Remove(filepath.Join(run, "run.json")); err != nil {
		t.Fatal(err)
	}
	r, warns, err := LoadRun(run)
	if err != nil {
		t.Fatal(err)
	}
	if info := r.Info; info.Mode != "cubic" || info.N != 2 || info.DelayMS != 4 || info.Rep != 1 || info.Valid {
		t.Errorf("info from id: %+v (want cubic 2 4 1, not valid)", info)
	}
	all := strings.Join(append(res.Warnings, warns...), "\n")
	for _, w := range []string{"meta.json", "run.json", "flows.csv", "emu/", "iperf3"} {
		if !strings.Contains(all, w) {
			t.Errorf("no warning about %s in %q", w, all)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	const id = "mode=cubic,n=2,delay=4ms,rep=1"
	tests := []struct {
		name, file, content, want string
	}{
		{"run.json", "run.json", `{"mode": "cubic", "n": "two"}`, "run.json: malformed JSON"},
		{"flows header", "flows.csv", "t_s,netns,src,dst\n1,sta1,a,b\n", `lacks column "cwnd"`},
		{"flows number", "flows.csv", "t_s,netns,src,dst,cwnd,srtt_us\n0.1,sta1,a,b,10,abc\n", `line 2, column srtt_us: "abc" is not a non-negative integer`},
		{"bounds", "bounds/sta1.jsonl", "{\"t\":\"2026-11-22T03:00:00Z\",\"hi\":3}\nnot json\n", "sta1.jsonl: line 2"},
		{"emu.json", "emu/emu.json", `{"valid": "yes"}`, "emu.json"},
		{"apqueue", "emu/apqueue.csv", "frames,bytes\n1,2\n", `lacks column "t_s"`},
		{"medium", "emu/medium.csv", "t_s,busy_share,sta1_share\n0.1,0.8,x\n", "sta1_share"},
	}
	for _, tt := range tests {
		root, run := copyRun(t, id)
		p := filepath.Join(run, tt.file)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(tt.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(root)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no runs/ directory") {
		t.Errorf("empty directory: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Errorf("missing directory: no error")
	}
}

func TestLoadMarksRunWithBrokenIperfInvalid(t *testing.T) {
	const id = "mode=cubic,n=2,delay=4ms,rep=1"
	for content, want := range map[string]string{
		"iperf3: error - unable to connect":         "sta1.json: not iperf3 -J output",
		`{"start": {}, "intervals": [], "end": {}}`: "no end.sum_received",
	} {
		root, run := copyRun(t, id)
		if err := os.WriteFile(filepath.Join(run, "iperf3", "sta1.json"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Load(root)
		if err != nil {
			t.Fatalf("one broken iperf3 report must not fail the whole load: %v", err)
		}
		if r := res.Runs[0]; r.Info.Valid || !strings.Contains(r.Info.InvalidReason, "unreadable iperf3 report of sta1") {
			t.Errorf("run valid=%v reason %q: want invalid naming sta1's report", r.Info.Valid, r.Info.InvalidReason)
		}
		if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, want) {
			t.Errorf("no warning containing %q: %q", want, w)
		}
	}
}

func TestLoadSkipsRunInProgress(t *testing.T) {
	const id, done = "mode=cubic,n=2,delay=4ms,rep=1", "mode=coop,n=2,delay=4ms,rep=1"
	root, run := copyRun(t, id)
	copyRunInto(t, root, done)
	if err := os.Remove(filepath.Join(run, "run.json")); err != nil {
		t.Fatal(err)
	}
	// iperf3 is still running: its report is empty.
	if err := os.WriteFile(filepath.Join(run, "iperf3", "sta1.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Load(root)
	if err != nil {
		t.Fatalf("a run in progress must not fail the whole load: %v", err)
	}
	if len(res.Runs) != 1 || res.Runs[0].Info.ID != done {
		t.Errorf("loaded %d runs, want only the finished %s", len(res.Runs), done)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), id+": skipped, in progress") {
		t.Errorf("no warning about the skipped run: %q", res.Warnings)
	}
}

func TestParseIperfError(t *testing.T) {
	ip, err := ParseIperf(strings.NewReader(`{"start":{},"intervals":[],"end":{},"error":"unable to connect to server"}`))
	if err != nil || ip.Error != "unable to connect to server" {
		t.Errorf("ParseIperf = %+v, %v", ip, err)
	}
}

// medium.csv as the emulator writes it (emu.WriteStats): a share per node,
// keyed by the node's name.
func TestParseMediumCSV(t *testing.T) {
	in := "t_s,busy_share,sta1_share,sta2_share,ap_share\n0.100,0.0109,0.0009,0.0000,0.0073\n0.200,0.8100,0.2500,0.5000,0.0600\n"
	m, err := ParseMediumCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m[1].T != 0.2 || m[1].Busy != 0.81 || len(m[1].Share) != 3 || m[1].Share["sta2"] != 0.5 || m[1].Share["ap"] != 0.06 {
		t.Errorf("medium %+v: want two rows, shares by node", m)
	}
}

func TestParseFlowsCSVRelativeTimes(t *testing.T) {
	in := "netns,t_s,src,dst,cwnd,extra\nsta1,0.2,a,b,5,x\nsta1,0.1,a,b,4,y\nsta2,0.1,c,d,1,z\n"
	flows, t0, err := ParseFlowsCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if t0 != 0 || len(flows) != 2 || flows[0].Samples[0].T != 0.1 || flows[0].Samples[0].Cwnd != 4 {
		t.Errorf("t0 %g flows %+v: want relative times kept, columns by name, sorted", t0, flows)
	}
}

// A closed connection's time-wait mini socket, listed by inet_diag without
// TCP info, was recorded as a last row with cwnd 0 and every counter 0; it
// ended the series at bytes_acked 0, and the station's data flow was lost
// (lab, downloads, 2026-11-24: one station's goodput fell back to iperf3's).
func TestParseFlowsCSVSkipsSocketsWithoutTCPInfo(t *testing.T) {
	in := "netns,t_s,src,dst,cwnd,bytes_acked,state\nsta1,0.1,a,b,10,0,1\nsta1,0.2,a,b,40,900000,1\nsta1,0.3,a,b,0,0,5\n"
	flows, _, err := ParseFlowsCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(flows) != 1 || len(flows[0].Samples) != 2 || analysis.AckedBytes(flows[0]) != 900000 {
		t.Errorf("flows %+v: want the cwnd-0 row skipped and 900000 bytes acknowledged", flows)
	}
}

// Real outputs: iperf3 3.12 -J of an 8 s upload over a 10 Mbit/s HTB link,
// and 40 rows recorded by `coopcc mon --record` (Unix times, extra columns).
func TestParseRealOutputs(t *testing.T) {
	f, err := os.Open("testdata/iperf3-3.12-upload.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ip, err := ParseIperf(f)
	if err != nil {
		t.Fatal(err)
	}
	if !near(ip.GoodputMbps(), 9707392*8/8.119792/1e6) || len(ip.Intervals) != 16 || ip.Reverse {
		t.Errorf("iperf3: goodput %g, %d intervals", ip.GoodputMbps(), len(ip.Intervals))
	}
	g, err := os.Open("testdata/monitor-recorded.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	flows, t0, err := ParseFlowsCSV(g)
	if err != nil {
		t.Fatal(err)
	}
	if t0 < 1.7e9 || len(flows) != 2 {
		t.Fatalf("t0 %f, %d flows: want Unix times rebased and 2 flows (data + control)", t0, len(flows))
	}
	data := analysis.DataFlows(flows, "sta1")
	if len(data) != 1 || data[0].Samples[len(data[0].Samples)-1].SRTT <= 0 || data[0].Samples[0].MSS != 1448 {
		t.Errorf("data flows %d; want the cubic upload with SRTT and MSS read", len(data))
	}
}

func TestLoadPutsSamplesOnTheRunClock(t *testing.T) {
	root, run := copyRun(t, "mode=cubic,n=1,delay=4ms,rep=1")
	js := `{"mode":"cubic","n":1,"delay_ms":4,"rep":1,"valid":true,"start":"2026-11-22T02:59:58Z",
	        "direction":"up","stations":[{"name":"sta1","group":"vehicle","mobility":"drive"}]}`
	if err := os.WriteFile(filepath.Join(run, "run.json"), []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Runs[0]
	// The first sample was recorded at 03:00:00, 2 s after the run started.
	if r.T0 != 1795316398 || !near(r.Flows[0].Samples[0].T, 2) {
		t.Errorf("T0 %f first sample %g, want the run start and 2 s", r.T0, r.Flows[0].Samples[0].T)
	}
	if st := r.Info.Stations[0]; st.Group != "vehicle" || st.Mobility != "drive" || r.Info.Direction != "up" {
		t.Errorf("station %+v direction %q", st, r.Info.Direction)
	}
	if len(r.Receivers) != 0 {
		t.Errorf("%d receiver series in a run without receivers.csv", len(r.Receivers))
	}
	// receivers.csv, one sample 3.5 s after the run started (1795316398),
	// lands on the same clock as flows.csv, with its bytes_received.
	rx := "t_s,netns,src,dst,cwnd,bytes_received\n1795316401.5,sta1,10.0.0.254:5201,10.0.0.1:40000,10,123456\n"
	if err := os.WriteFile(filepath.Join(run, "receivers.csv"), []byte(rx), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err = Load(root); err != nil {
		t.Fatal(err)
	}
	r = res.Runs[0]
	if len(r.Receivers) != 1 || !near(r.Receivers[0].Samples[0].T, 3.5) || r.Receivers[0].Samples[0].BytesReceived != 123456 {
		t.Errorf("receivers %+v, want one sample at 3.5 s with 123456 bytes", r.Receivers)
	}
}

func TestTrafficZero(t *testing.T) {
	start := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	ts := float64(start.Unix())
	info := analysis.RunInfo{Start: start}
	if got := trafficZero(info, ts+2); got != ts {
		t.Errorf("only start: %v, want the run start %v", got, ts)
	}
	// Agents settled for 1.7 s: the first client launched at 0.02 s of the
	// schedule and its connection was first sampled at start + 1.72 s.
	info.Stations = []analysis.Station{{Name: "sta1", LaunchedS: 0.02}, {Name: "sta2", LaunchedS: 0.05}}
	if got := trafficZero(info, ts+1.72); math.Abs(got-(ts+1.70)) > 1e-6 {
		t.Errorf("estimated: %v, want %v", got, ts+1.70)
	}
	info.TrafficStart = start.Add(1700 * time.Millisecond)
	if got := trafficZero(info, ts+9); math.Abs(got-(ts+1.7)) > 1e-6 {
		t.Errorf("recorded traffic_start: %v, want %v", got, ts+1.7)
	}
}

func TestRetriedWarning(t *testing.T) {
	if w := retriedWarning(schema.Meta{}); w != "" {
		t.Errorf("no retries: %q", w)
	}
	m := schema.Meta{Retried: map[string][]string{"a": {"retried/a.attempt1: x", "retried/a.attempt2: y"}, "b": {"retried/b.attempt1: z"}}}
	if w := retriedWarning(m); !strings.HasPrefix(w, "2 run(s) were run again after 3 attempt(s)") {
		t.Errorf("got %q", w)
	}
}

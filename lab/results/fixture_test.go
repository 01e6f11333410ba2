package results

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/lab/analysis"
	"github.com/coopcc/coopcc/schema"
)

var update = flag.Bool("update", false, "rewrite testdata/results from the generator in fixture_test.go")

// TestFixture checks that testdata/results is what the generator below
// writes from the Go record types (schema.Run, schema.Meta,
// schema.BoundEvent): the fixture cannot drift from the format the runner
// writes. After changing the generator or a record type, rewrite it with
//
//	go test ./lab/results -run TestFixture -update
func TestFixture(t *testing.T) {
	dir := fixture
	if !*update {
		dir = filepath.Join(t.TempDir(), "results")
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := writeFixture(dir); err != nil {
		t.Fatal(err)
	}
	if *update {
		return
	}
	want, got := treeFiles(t, dir), treeFiles(t, fixture)
	for p, b := range want {
		g, ok := got[p]
		if !ok {
			t.Errorf("%s: missing from testdata/results (go test ./lab/results -run TestFixture -update)", p)
		} else if !bytes.Equal(g, b) {
			t.Errorf("%s: differs from what the generator writes (go test ./lab/results -run TestFixture -update)", p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: in testdata/results but not written by the generator", p)
		}
	}
}

// treeFiles reads every file under root by relative path.
func treeFiles(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		files[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// The fixture: hand-made numbers, deterministic. 4 ms wired delay, modes
// cubic and coop, N = 1 and 2, one repetition each plus an invalid second
// repetition of coop N=2. In cubic N=2, sta2 has a loss-driven cwnd
// collapse at t = 1.5 s. Times in flows.csv are Unix seconds like the
// monitor's recorder writes them.

const (
	fixT0          = 1795316400.0 // 2026-11-22T03:00:00Z, the start in meta.json
	fixFlowsHeader = "t_s,netns,src,dst,cc,cwnd,ssthresh,mss,srtt_us,rttvar_us,min_rtt_us,ca_state,retrans,total_retrans,lost,unacked,bytes_acked,delivery_rate_Bps,app_limited,state"
	fixScenario    = "name = \"fixture\"\nmodes = [\"cubic\", \"coop\"]\nn = [1, 2]\ndelay_ms = [4]\nrepetitions = 1\nduration_s = 3\n"
	fixSamples     = 31
)

// fixStation is one station of a fixture run: iperf3 interval rates (0.5 s
// each) and, per 0.1 s sample, cwnd, SRTT, rate and optionally CA state and
// total retransmissions.
type fixStation struct {
	name     string
	managed  bool
	iperf    []float64
	cwnd     []int
	srtt     []float64 // ms
	rate     []float64 // Mbit/s
	ca       []int
	retrans  []int
	boundsHi uint32 // an agent bound event at 0.5 s when non-zero
}

// iperf3 -J, the part the loader reads (iperf3's format, not ours).
type (
	ipSum struct {
		Start         float64 `json:"start"`
		End           float64 `json:"end"`
		Seconds       float64 `json:"seconds"`
		Bytes         float64 `json:"bytes"`
		BitsPerSecond float64 `json:"bits_per_second"`
		Retransmits   *int    `json:"retransmits,omitempty"`
		Omitted       *bool   `json:"omitted,omitempty"`
		Sender        bool    `json:"sender"`
	}
	ipInterval struct {
		Streams []any `json:"streams"`
		Sum     ipSum `json:"sum"`
	}
	ipReport struct {
		Start struct {
			TestStart struct {
				Protocol   string  `json:"protocol"`
				NumStreams int     `json:"num_streams"`
				Duration   float64 `json:"duration"`
				Reverse    int     `json:"reverse"`
			} `json:"test_start"`
		} `json:"start"`
		Intervals []ipInterval `json:"intervals"`
		End       struct {
			SumSent     ipSum `json:"sum_sent"`
			SumReceived ipSum `json:"sum_received"`
		} `json:"end"`
	}
)

func fixIperf(mbps []float64) ipReport {
	var rep ipReport
	rep.Start.TestStart.Protocol, rep.Start.TestStart.NumStreams = "TCP", 1
	zero, no := 0, false
	total := 0.0
	for i, m := range mbps {
		b := m * 1e6 / 8 * 0.5
		total += b
		rep.Intervals = append(rep.Intervals, ipInterval{Streams: []any{}, Sum: ipSum{Start: float64(i) * 0.5, End: float64(i+1) * 0.5,
			Seconds: 0.5, Bytes: b, BitsPerSecond: m * 1e6, Retransmits: &zero, Omitted: &no, Sender: true}})
	}
	dur := float64(len(mbps)) * 0.5
	rep.Start.TestStart.Duration = dur
	rep.End.SumSent = ipSum{End: dur, Seconds: dur, Bytes: total, BitsPerSecond: total * 8 / dur, Retransmits: &zero, Sender: true}
	rep.End.SumReceived = ipSum{End: dur, Seconds: dur, Bytes: total * 0.99, BitsPerSecond: total * 0.99 * 8 / dur, Sender: true}
	return rep
}

func fixFlowRows(st fixStation, idx int) []string {
	var rows []string
	acked := int64(0)
	for i, c := range st.cwnd {
		t := fixT0 + 0.1*float64(i)
		if i > 0 {
			acked += int64(st.rate[i] * 1e6 / 8 * 0.1)
		}
		ca, rt := 0, 0
		if st.ca != nil {
			ca = st.ca[i]
		}
		if st.retrans != nil {
			rt = st.retrans[i]
		}
		rows = append(rows, fmt.Sprintf("%.6f,%s,10.77.9.%d:4%d000,10.77.9.1:5201,cubic,%d,%d,1448,%d,%d,4100,%d,0,%d,0,%d,%d,%d,0,1",
			t, st.name, idx+10, idx, c, max(c, 2), int64(st.srtt[i]*1000), int64(st.srtt[i]*250), ca, rt, c, acked, int64(st.rate[i]*1e6/8)))
	}
	// iperf3's control connection: a few hundred bytes, left out by the analysis.
	rows = append(rows, fmt.Sprintf("%.6f,%s,10.77.9.%d:3%d999,10.77.9.1:5201,cubic,10,2147483647,1448,4300,2000,4200,0,0,0,0,0,160,0,1,1",
		fixT0, st.name, idx+10, idx))
	return rows
}

func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return writeFile(path, append(b, '\n'))
}

func fixWriteRun(root string, rec schema.Run, stations []fixStation, emuValid bool) error {
	d := filepath.Join(root, "runs", rec.ID)
	rows := []string{fixFlowsHeader}
	for i, st := range stations {
		if err := writeJSONFile(filepath.Join(d, "iperf3", st.name+".json"), fixIperf(st.iperf)); err != nil {
			return err
		}
		rows = append(rows, fixFlowRows(st, i)...)
		if st.boundsHi != 0 {
			ev := schema.BoundEvent{T: time.Unix(int64(fixT0), 5e8).UTC(), Lo: 2, Hi: st.boundsHi, N: len(stations), Policy: "coop", Mode: "cooperative",
				Reason: fmt.Sprintf("n=%d", len(stations))}
			b, err := json.Marshal(ev)
			if err != nil {
				return err
			}
			if err := writeFile(filepath.Join(d, "bounds", st.name+".jsonl"), append(b, '\n')); err != nil {
				return err
			}
		}
		rec.Stations = append(rec.Stations, schema.Station{Name: st.name, Managed: st.managed, Agent: st.managed, StartS: 0, StopS: 3, PHYMbps: 54})
	}
	if err := writeFile(filepath.Join(d, "flows.csv"), []byte(strings.Join(rows, "\n")+"\n")); err != nil {
		return err
	}
	if err := writeJSONFile(filepath.Join(d, "run.json"), rec); err != nil {
		return err
	}
	var sb strings.Builder
	sb.WriteString("station,airtime_s,airtime_share,attempts,collisions,retries,drops,tx_frames,tx_bytes,rx_frames,rx_bytes\n")
	share := 0.9 / float64(len(stations))
	for _, st := range stations {
		fmt.Fprintf(&sb, "%s,%.3f,%.3f,900,12,15,0,880,1270000,440,30000\n", st.name, 3*share, share)
	}
	sb.WriteString("ap,0.300,0.100,450,12,14,3,440,30000,880,1270000\n")
	if err := writeFile(filepath.Join(d, "emu", "stations.csv"), []byte(sb.String())); err != nil {
		return err
	}
	sb.Reset()
	sb.WriteString("t_s,frames,bytes,drops_total\n")
	for i := 0; i < fixSamples; i++ {
		fr := min(i*len(stations)*3, 100)
		fmt.Fprintf(&sb, "%.2f,%d,%d,%d\n", 0.1*float64(i), fr, fr*66, max(0, i-25))
	}
	if err := writeFile(filepath.Join(d, "emu", "apqueue.csv"), []byte(sb.String())); err != nil {
		return err
	}
	emu := analysis.EmuStatus{Valid: emuValid, ThresholdUs: 500, Events: 120000, BusyFraction: 0.6}
	emu.LatenessUs.P50, emu.LatenessUs.P99, emu.LatenessUs.Max = 3, 55, 900
	if !emuValid {
		emu.LatenessUs.P99, emu.LatenessUs.Max, emu.Reason = 2400, 9000, "lateness p99 2400us > threshold 500us"
	}
	return writeJSONFile(filepath.Join(d, "emu", "emu.json"), emu)
}

func fixSteady(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func fixRamp(n, step, lim int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = min(2+step*i, lim)
	}
	return s
}

func fixLine(n int, a, b float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = a + b*float64(i)
	}
	return s
}

// writeFixture writes the synthetic results directory into root.
func writeFixture(root string) error {
	n := fixSamples
	start := time.Unix(int64(fixT0), 0).UTC()
	sum := sha256.Sum256([]byte(fixScenario))
	var ids []string
	run := func(mode string, nst, rep int, valid bool, reason string, stations []fixStation, emuValid bool) error {
		id := fmt.Sprintf("mode=%s,n=%d,delay=4ms,rep=%d", mode, nst, rep)
		ids = append(ids, id)
		rec := schema.Run{Schema: schema.RunVersion, ID: id, Mode: mode, N: nst, DelayMS: 4, Rep: rep, Params: map[string]string{},
			Valid: valid, InvalidReason: reason, DurationS: 3, LengthS: 3, Backend: "emu", Direction: "up"}
		if mode == "coop" {
			rec.ModeKind, rec.Policy, rec.Params["policy"] = "policy", "coop", "coop"
		} else {
			rec.ModeKind = "kernel"
		}
		return fixWriteRun(root, rec, stations, emuValid)
	}
	if err := writeFile(filepath.Join(root, "scenario.toml"), []byte(fixScenario)); err != nil {
		return err
	}
	// cubic N=2: sta2 collapses at 1.5 s (cwnd 30 -> 1, CA Loss) and rebuilds by 2.4 s.
	c2 := append(fixRamp(15, 2, 30), 1, 2, 4, 8, 12, 16, 20, 24, 30, 30, 30, 30, 30, 30, 30, 30)
	ca2 := make([]int, n)
	ca2[15], ca2[16] = 4, 4
	rt2 := make([]int, n)
	for i := 15; i < n; i++ {
		rt2[i] = 3
	}
	r2 := append(fixSteady(15, 9), 1, 1, 2, 2, 3, 4, 5, 6, 8, 9, 9, 9, 9, 9, 9, 9)
	steps := []error{
		run("cubic", 1, 1, true, "", []fixStation{{name: "sta1", iperf: []float64{18, 20, 20, 21, 20, 20}, cwnd: fixRamp(n, 2, 40),
			srtt: fixLine(n, 4, 0.5), rate: fixSteady(n, 20)}}, true),
		run("cubic", 2, 1, true, "", []fixStation{
			{name: "sta1", iperf: []float64{14, 15, 16, 16, 15, 16}, cwnd: fixRamp(n, 3, 60), srtt: fixLine(n, 4, 3), rate: fixSteady(n, 15)},
			{name: "sta2", iperf: []float64{8, 9, 2, 3, 6, 9}, cwnd: c2, srtt: fixLine(n, 4, 3), rate: r2, ca: ca2, retrans: rt2}}, true),
		run("coop", 1, 1, true, "", []fixStation{{name: "sta1", managed: true, iperf: []float64{19, 21, 21, 21, 21, 21},
			cwnd: fixRamp(n, 2, 12), srtt: fixSteady(n, 4.6), rate: fixSteady(n, 21), boundsHi: 12}}, true),
	}
	for rep, valid := range []bool{true, false} {
		reason := ""
		if !valid {
			reason = "emulator overloaded"
		}
		var sts []fixStation
		for k, name := range []string{"sta1", "sta2"} {
			sts = append(sts, fixStation{name: name, managed: true, iperf: []float64{10, 11, 11, 11, 11, 11}, cwnd: fixRamp(n, 2, 8),
				srtt: fixSteady(n, 5+float64(k)), rate: fixSteady(n, 11), boundsHi: 8})
		}
		steps = append(steps, run("coop", 2, rep+1, valid, reason, sts, valid))
	}
	for _, err := range steps {
		if err != nil {
			return err
		}
	}
	meta := schema.Meta{Scenario: "fixture", ScenarioSHA256: hex.EncodeToString(sum[:]), Quick: true, Backend: "emu",
		GitRevision: "0123456789ab", Kernel: schema.Uname{Sysname: "Linux", Release: "6.18.0-test"},
		Tools: map[string]string{"iperf3": "3.12"}, HostSysctls: map[string]string{"net.ipv4.tcp_congestion_control": "cubic"},
		Start: start, End: start.Add(time.Minute), Runs: ids}
	return writeJSONFile(filepath.Join(root, "meta.json"), meta)
}

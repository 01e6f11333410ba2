package analysis

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func flowFor(station string, srttMs []float64, acked uint64) Series {
	s := Series{Key: FlowKey{Station: station, Src: "a", Dst: "b"}}
	for i, r := range srttMs {
		s.Samples = append(s.Samples, Sample{T: float64(i) / 10, Cwnd: 10, SRTT: time.Duration(r * float64(time.Millisecond)),
			BytesAcked: acked * uint64(i) / uint64(len(srttMs)-1)})
	}
	return s
}

func testRun(id, mode string, rep int, valid bool, g1, g2 float64) Run {
	ip := func(st string, mbps float64) Iperf {
		return Iperf{Station: st, ReceivedBytes: mbps * 1e6 / 8 * 10, ReceivedSeconds: 10}
	}
	return Run{
		Info: RunInfo{ID: id, Mode: mode, N: 2, DelayMS: 4, Rep: rep, Valid: valid,
			Stations: []Station{{Name: "sta1", Managed: true}, {Name: "sta2"}}},
		Iperf: map[string]Iperf{"sta1": ip("sta1", g1), "sta2": ip("sta2", g2)},
		Flows: []Series{
			flowFor("sta1", []float64{10, 20, 30, 40, 50}, 1<<20),
			flowFor("sta2", []float64{60, 70, 80, 90, 100}, 1<<20),
			flowFor("sta2", []float64{1000, 1000}, 300), // control connection: ignored
		},
	}
}

func TestSummarize(t *testing.T) {
	r := testRun("mode=coop,n=2,delay=4ms,rep=1", "coop", 1, true, 6, 2)
	r.Emu = &Emu{Queue: []QueueSample{{T: 0, Frames: 1, DropsTotal: 0}, {T: 1, Frames: 3, DropsTotal: 5}}}
	rs := Summarize(r, DefaultLossRule())
	if rs.Group != "mode=coop,n=2,delay=4ms" {
		t.Errorf("Group = %q", rs.Group)
	}
	if !near(rs.AggregateMbps, 8) || !near(rs.Jain, 64.0/80) {
		t.Errorf("aggregate %g jain %g, want 8 and 0.8", rs.AggregateMbps, rs.Jain)
	}
	if !near(rs.ManagedMbps, 6) || !near(rs.UnmanagedMbps, 2) {
		t.Errorf("managed %g unmanaged %g, want 6 and 2", rs.ManagedMbps, rs.UnmanagedMbps)
	}
	if !math.IsNaN(rs.WeightedFairness) {
		t.Errorf("weighted fairness %g without Max values, want NaN", rs.WeightedFairness)
	}
	// pooled 10..100 step 10: p50 = 55, p95 = rank 8.55 → 90 + 0.55·10
	if rs.RTT.Count != 10 || !near(rs.RTT.P50, 55) || !near(rs.RTT.P95, 95.5) {
		t.Errorf("RTT = %+v, want 10 samples, p50 55, p95 95.5 (control connection left out)", rs.RTT)
	}
	if rs.Stations[1].DataFlows != 1 || !near(rs.Stations[0].RTT.P50, 30) {
		t.Errorf("station summaries %+v", rs.Stations)
	}
	if rs.APDrops != 5 || !near(rs.APQueueP95, 2.9) {
		t.Errorf("AP drops %g queue p95 %g, want 5 and 2.9", rs.APDrops, rs.APQueueP95)
	}
	if !rs.Valid {
		t.Errorf("run should be valid: %s", rs.InvalidReason)
	}

	r.Emu.Status = &EmuStatus{Valid: false, Reason: "lateness p99 900us > 500us"}
	r.Iperf["sta2"] = Iperf{Error: "unable to connect"}
	rs = Summarize(r, DefaultLossRule())
	if rs.Valid || !strings.Contains(rs.InvalidReason, "lateness") || !strings.Contains(rs.InvalidReason, "unable to connect") {
		t.Errorf("valid %v reason %q: want invalid naming the emulator and iperf3", rs.Valid, rs.InvalidReason)
	}
	// sta2's goodput now comes from bytes_acked: 1 MiB over 0.4 s.
	if got := rs.Stations[1]; got.GoodputSource != SourceAcked || !near(got.GoodputMbps, float64(1<<20)*8/0.4/1e6) {
		t.Errorf("fallback goodput %g from %s", got.GoodputMbps, got.GoodputSource)
	}
}

func TestGroupAndReference(t *testing.T) {
	runs := []RunSummary{
		Summarize(testRun("mode=cubic,n=2,delay=4ms,rep=2", "cubic", 2, true, 1, 3), DefaultLossRule()),
		Summarize(testRun("mode=cubic,n=2,delay=4ms,rep=1", "cubic", 1, true, 3, 3), DefaultLossRule()),
		Summarize(testRun("mode=cubic,n=2,delay=4ms,rep=3", "cubic", 3, false, 50, 50), DefaultLossRule()),
	}
	gs := Group(runs)
	if len(gs) != 1 {
		t.Fatalf("%d groups, want 1", len(gs))
	}
	g := gs[0]
	if g.ValidRuns != 2 || len(g.Runs) != 3 || g.Runs[0].Rep != 1 {
		t.Errorf("valid %d of %d, first rep %d", g.ValidRuns, len(g.Runs), g.Runs[0].Rep)
	}
	// aggregates 4 and 6 (the invalid run's 100 is left out); Jain 0.8 and 1.
	if !near(g.AggregateMbps.Mean, 5) || g.AggregateMbps.Min != 4 || g.AggregateMbps.Max != 6 || !near(g.Jain.Mean, 0.9) {
		t.Errorf("aggregate %+v jain %+v", g.AggregateMbps, g.Jain)
	}

	// A reference run where sta1 ran alone at 4 Mbit/s and sta2 alone at 6.
	alone := func(st string, mbps float64) RunSummary {
		r := testRun("mode=cubic,n=1,delay=4ms,rep=1", "cubic", 1, true, mbps, mbps)
		r.Info.Stations = []Station{{Name: st}}
		return Summarize(r, DefaultLossRule())
	}
	all := append([]RunSummary{alone("sta1", 4), alone("sta2", 6)}, runs[1]) // runs[1]: 3 and 3
	FillMaxFromReference(all)
	// normalized 0.75 and 0.5 → 1.5625 / (2·0.8125)
	if got := all[2].WeightedFairness; !near(got, 1.5625/1.625) {
		t.Errorf("weighted fairness %g, want %g", got, 1.5625/1.625)
	}
}

func TestDataFlowsStarvedStation(t *testing.T) {
	ctl := flowFor("sta1", []float64{5, 5}, 300)
	starved := flowFor("sta1", []float64{900, 1200, 1500}, 20<<10)
	starved.Key.Src = "c"
	if got := DataFlows([]Series{ctl, starved}, "sta1"); len(got) != 1 || got[0].Key.Src != "c" {
		t.Errorf("DataFlows = %+v, want the starved 20 KiB flow", got)
	}
	if got := DataFlows([]Series{ctl}, "sta1"); len(got) != 0 {
		t.Errorf("control connection alone taken as a data flow: %+v", got)
	}
	big := flowFor("sta1", []float64{5, 5}, 1<<20)
	if got := DataFlows([]Series{ctl, starved, big}, "sta1"); len(got) != 1 || got[0].Key.Src != "a" {
		t.Errorf("with a bulk flow present only it counts: %+v", got)
	}
}

func TestGroupOrder(t *testing.T) {
	var runs []RunSummary
	for _, m := range []string{"bbr", "zeta", "coop", "alpha", "cubic"} {
		runs = append(runs, RunSummary{Mode: m, N: 2, DelayMS: 4, Group: "mode=" + m, Valid: true})
	}
	runs = append(runs, RunSummary{Mode: "bbr", N: 1, DelayMS: 256, Group: "mode=bbr,d", Valid: true})
	var got []string
	for _, g := range Group(runs) {
		got = append(got, g.Mode)
	}
	if want := "cubic coop bbr alpha zeta bbr"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}

// A download: the station's own socket only receives; the server's socket,
// recorded in netns "srv", is the data flow.
func TestDataFlowsDownload(t *testing.T) {
	own := flowFor("veh", []float64{1, 1, 1}, 200)
	own.Key.Src, own.Key.Dst = "10.77.1.2:40000", "10.77.0.1:5201"
	srv := flowFor("srv", []float64{25, 30, 35}, 4<<20)
	srv.Key.Src, srv.Key.Dst = "10.77.0.1:5201", "10.77.1.2:40000"
	other := flowFor("srv", []float64{25, 30, 35}, 4<<20)
	other.Key.Src, other.Key.Dst = "10.77.0.1:5201", "10.77.1.3:40000"
	got := DataFlows([]Series{own, srv, other}, "veh")
	if len(got) != 1 || got[0].Key.Station != "srv" || got[0].Key.Dst != "10.77.1.2:40000" {
		t.Errorf("DataFlows = %+v, want the server's socket towards veh", got)
	}
}

func TestGroupMeansAndGroupReference(t *testing.T) {
	st := func(name, group string, phy, mbps float64) (Station, Iperf) {
		return Station{Name: name, Group: group, PHYMbps: phy}, Iperf{ReceivedBytes: mbps * 1e6 / 8, ReceivedSeconds: 1}
	}
	mk := func(id string, valid bool, specs ...[4]any) RunSummary {
		r := Run{Info: RunInfo{ID: id, Mode: "coop", DelayMS: 4, Valid: valid}, Iperf: map[string]Iperf{}}
		for _, s := range specs {
			station, ip := st(s[0].(string), s[1].(string), s[2].(float64), s[3].(float64))
			r.Info.Stations = append(r.Info.Stations, station)
			r.Iperf[station.Name] = ip
		}
		return Summarize(r, DefaultLossRule())
	}
	runs := []RunSummary{
		// alone references, 100 Mbit/s wired: phone 40, tablet 10
		mk("mode=coop,n=1,wired_rate=100Mbps,rep=1", true, [4]any{"sta1", "phone", 433.3, 40.0}),
		// (a run of sweep.alone: its alone element is not part of the variant)
		mk("mode=cubic,n=1,wired_rate=100Mbps,alone=tablet,rep=2", true, [4]any{"sta9", "tablet", 65.0, 10.0}),
		// a reference at another wired rate must not be used
		mk("mode=coop,n=1,wired_rate=1Gbps,rep=1", true, [4]any{"sta1", "phone", 433.3, 400.0}),
		mk("mode=coop,n=3,wired_rate=100Mbps,alone=all,rep=1", true,
			[4]any{"sta1", "phone", 433.3, 20.0}, [4]any{"sta2", "phone", 433.3, 10.0}, [4]any{"sta3", "tablet", 65.0, 5.0}),
	}
	r := runs[3]
	if !near(r.GroupMbps["phone"], 15) || r.GroupCount["phone"] != 2 || !near(r.GroupMbps["tablet"], 5) {
		t.Errorf("group means %v counts %v", r.GroupMbps, r.GroupCount)
	}
	FillMaxFromReference(runs)
	// normalized 0.5, 0.25, 0.5 → 1.5625 / (3 · 0.5625)
	if got := runs[3].WeightedFairness; !near(got, 1.5625/1.6875) {
		t.Errorf("weighted fairness %g, want %g", got, 1.5625/1.6875)
	}
	if got := runs[3].Stations[0].MaxMbps; got != 40 {
		t.Errorf("phone Max %g, want 40 (same wired rate only)", got)
	}
}

func TestStationWithoutMeasurementInvalidatesRun(t *testing.T) {
	r := testRun("mode=cubic,n=2,delay=4ms,rep=1", "cubic", 1, true, 5, 5)
	delete(r.Iperf, "sta2")
	r.Flows = r.Flows[:1]
	rs := Summarize(r, DefaultLossRule())
	if rs.Valid || !strings.Contains(rs.InvalidReason, "sta2: no goodput") {
		t.Errorf("valid %v reason %q: want invalid naming sta2", rs.Valid, rs.InvalidReason)
	}
	if !near(rs.Jain, 1) || !near(rs.AggregateMbps, 5) {
		t.Errorf("jain %g aggregate %g over the measured station", rs.Jain, rs.AggregateMbps)
	}
}

func TestAckedInWindow(t *testing.T) {
	s := Series{Samples: []Sample{{T: 1, BytesAcked: 100}, {T: 2, BytesAcked: 300}, {T: 4, BytesAcked: 700}}}
	for _, tc := range []struct{ t0, t1, want float64 }{
		{0, 10, 700},  // the whole flow: it opened inside the window
		{2, 4, 400},   // between samples
		{1.5, 3, 300}, // interpolated at both edges: 200 -> 500
		{5, 6, 0},     // after the flow closed
		{3, 3, 0},     // empty window
	} {
		if got := AckedInWindow(s, tc.t0, tc.t1); !near(got, tc.want) {
			t.Errorf("AckedInWindow(%g, %g) = %g, want %g", tc.t0, tc.t1, got, tc.want)
		}
	}
}

// TestGoodputIsMeasuredInTheWindow: a flow starved during the 10 s window
// that then drains its backlog alone for another 30 s reports a high
// iperf3 average over its own lifetime; the run's goodput must count only
// what was acknowledged inside the window.
func TestGoodputIsMeasuredInTheWindow(t *testing.T) {
	mk := func(rateBps float64, until float64) Series {
		var sm []Sample
		for t := 0.0; t <= until+1e-9; t += 0.5 {
			sm = append(sm, Sample{T: t, BytesAcked: uint64(rateBps * t)})
		}
		return Series{Samples: sm}
	}
	fast, starved := mk(2.5e6, 10), mk(0.125e6, 10)
	// After the window the starved flow drains 90 MB at 3 MB/s.
	for t := 10.5; t <= 40; t += 0.5 {
		starved.Samples = append(starved.Samples, Sample{T: t, BytesAcked: uint64(1.25e6 + 3e6*(t-10))})
	}
	fast.Key, starved.Key = FlowKey{Station: "sta1", Src: "a:1", Dst: "s:5201"}, FlowKey{Station: "sta2", Src: "b:1", Dst: "s:5201"}
	run := Run{
		Info: RunInfo{ID: "mode=cubic,n=2,delay=4ms,rep=1", Mode: "cubic", N: 2, Valid: true, Stations: []Station{
			{Name: "sta1", StartS: 0, StopS: 10}, {Name: "sta2", StartS: 0, StopS: 10}}},
		Flows: []Series{fast, starved},
		Iperf: map[string]Iperf{
			"sta1": {ReceivedBytes: 25e6, ReceivedSeconds: 10},
			"sta2": {ReceivedBytes: 91.25e6, ReceivedSeconds: 40}, // 18.25 Mbit/s over its lifetime
		},
	}
	rs := Summarize(run, DefaultLossRule())
	if got := rs.Stations[1]; got.GoodputSource != SourceWindow || !near(got.GoodputMbps, 1.0) {
		t.Errorf("starved station: %g Mbit/s from %s, want 1.0 from the window", got.GoodputMbps, got.GoodputSource)
	}
	if !near(rs.AggregateMbps, 21) {
		t.Errorf("aggregate %g Mbit/s, want 21 (20 + 1), not the sum of lifetime averages", rs.AggregateMbps)
	}
	if got := rs.Stations[1].IperfMbps; !near(got, 18.25) {
		t.Errorf("iperf3 cross-check value %g, want 18.25", got)
	}
}

// Behind a queue of ACKs that grows during the window, the sender's
// bytes_acked lags what the receiver got: the receiver's side is the
// goodput when the run recorded it, and only for the stations it covers.
func TestGoodputFromTheReceiver(t *testing.T) {
	const mb = 1 << 20
	series := func(station string, counter func(t float64) uint64, received bool) Series {
		s := Series{Key: FlowKey{Station: station, Src: "a", Dst: "b"}}
		for i := 0; i <= 100; i++ {
			x := Sample{T: float64(i) / 10, SRTT: 10 * time.Millisecond}
			if received {
				x.BytesReceived = counter(x.T)
			} else {
				x.BytesAcked = counter(x.T)
			}
			s.Samples = append(s.Samples, x)
		}
		return s
	}
	// 1 MB/s delivered; the ACK delay grows from 0 to 2 s over the 10 s window.
	delivered := func(t float64) uint64 { return uint64(t * mb) }
	acked := func(t float64) uint64 { return uint64(max(0, t-0.2*t) * mb) }
	run := Run{
		Info: RunInfo{ID: "mode=cubic,n=2,delay=4ms,rep=1", Mode: "cubic", N: 2, Valid: true,
			Stations: []Station{{Name: "sta1", StopS: 10}, {Name: "sta2", StopS: 10}}},
		Flows:     []Series{series("sta1", acked, false), series("sta2", acked, false)},
		Receivers: []Series{series("sta1", delivered, true), series("sta1", func(float64) uint64 { return 300 }, true)},
	}
	rs := Summarize(run, DefaultLossRule())
	want := 8.0 * mb / 1e6 // 1 MB/s in Mbit/s
	if s := rs.Stations[0]; s.GoodputSource != SourceReceiver || !near(s.GoodputMbps, want) {
		t.Errorf("sta1: %g Mbit/s from %q, want %g from the receiver", s.GoodputMbps, s.GoodputSource, want)
	}
	if s := rs.Stations[1]; s.GoodputSource != SourceWindow || !near(s.GoodputMbps, 0.8*want) {
		t.Errorf("sta2 (no receiver series): %g from %q, want %g from the sender's window", s.GoodputMbps, s.GoodputSource, 0.8*want)
	}
	if got := rs.GoodputSources(); got != SourceReceiver+"+"+SourceWindow {
		t.Errorf("run's goodput sources %q, want %q", got, SourceReceiver+"+"+SourceWindow)
	}
}

// coexRun is a run of group key with the given goodputs of sta1… (the first
// managed of them managed).
func coexRun(key string, rep int, valid bool, managed int, goodputs ...float64) RunSummary {
	r := RunSummary{ID: key + ",rep=" + strconv.Itoa(rep), Group: key, Mode: "coop", N: len(goodputs), DelayMS: 256, Rep: rep, Valid: valid}
	var m, u []float64
	for i, g := range goodputs {
		st := StationSummary{Station: "sta" + strconv.Itoa(i+1), Managed: i < managed, GoodputMbps: g}
		r.Stations = append(r.Stations, st)
		if st.Managed {
			m = append(m, g)
		} else {
			u = append(u, g)
		}
	}
	r.ManagedMbps, r.UnmanagedMbps = StatOf(m).Mean, StatOf(u).Mean
	r.ManagedRatio = r.ManagedMbps / r.UnmanagedMbps
	return r
}

// The managed stations' ratio is compared with what the same stations got
// in the baseline runs, where nobody is managed: valid runs of the group
// that differs only in "managed", not other N, not invalid runs.
func TestBaselineRatios(t *testing.T) {
	const mixed, base = "mode=coop,n=4,delay=256ms,managed=2", "mode=coop,n=4,delay=256ms,managed=0"
	runs := []RunSummary{
		coexRun(mixed, 1, true, 2, 4, 4, 6, 6),
		coexRun(mixed, 2, true, 2, 5, 5, 5, 5),
		coexRun(base, 1, true, 0, 6, 6, 5, 5),
		coexRun(base, 2, true, 0, 4, 4, 5, 5),
		coexRun(base, 3, false, 0, 1, 1, 9, 9),                                  // invalid: left out
		coexRun("mode=coop,n=10,delay=256ms,managed=0", 1, true, 0, 9, 9, 1, 1), // another N
		coexRun("mode=coop,n=10,delay=256ms,managed=2", 1, true, 2, 2, 2, 2, 2),
		coexRun("mode=coop,n=7,delay=256ms,managed=2", 1, true, 2, 2, 2, 2, 2), // no baseline
	}
	for _, g := range Group(runs) {
		switch g.Key {
		case mixed:
			if g.ManagedRatio.N != 2 || math.Abs(g.ManagedRatio.Mean-(4.0/6+1)/2) > 1e-9 {
				t.Errorf("managed ratio %+v, want mean of 0.667 and 1 over 2 runs", g.ManagedRatio)
			}
			if b := g.BaselineRatio; b.N != 2 || math.Abs(b.Mean-1) > 1e-9 || math.Abs(b.Min-0.8) > 1e-9 || math.Abs(b.Max-1.2) > 1e-9 {
				t.Errorf("baseline ratio %+v, want 0.8 and 1.2 (mean 1) over the 2 valid baseline runs", b)
			}
		case base:
			if g.ManagedRatio.N != 0 || g.BaselineRatio.N != 0 {
				t.Errorf("a baseline group has ratios %+v / %+v, want none", g.ManagedRatio, g.BaselineRatio)
			}
		case "mode=coop,n=10,delay=256ms,managed=2":
			if b := g.BaselineRatio; b.N != 1 || b.Mean != 9 {
				t.Errorf("baseline ratio at N = 10 %+v, want 9 from its one baseline run", b)
			}
		case "mode=coop,n=7,delay=256ms,managed=2":
			if g.BaselineRatio.N != 0 {
				t.Errorf("baseline ratio %+v for a group without baseline runs", g.BaselineRatio)
			}
		}
	}
}

package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/coopcc/coopcc/schema"
)

// steadyFlow acknowledges mbps from t0 to t1, sampled every 50 ms.
func steadyFlow(station string, t0, t1, mbps float64) Series {
	s := Series{Key: FlowKey{Station: station, Src: station + ":5201", Dst: "srv:5201"}}
	for t := t0; t <= t1+1e-9; t += 0.05 {
		s.Samples = append(s.Samples, Sample{T: t, Cwnd: 10, BytesAcked: uint64((t - t0) * mbps * 1e6 / 8)})
	}
	return s
}

// staggeredRun has two 802.11g stations that each deliver 20 Mbit/s, one
// after the other: sta1 in [0, 10] s, sta2 in [10, 20] s.
func staggeredRun() Run {
	return Run{
		Info: RunInfo{ID: "mode=cubic,n=2,delay=4ms,rep=1", Mode: "cubic", N: 2, Valid: true,
			WLAN: schema.WLAN{PHY: "802.11g"},
			Stations: []Station{{Name: "sta1", StartS: 0, StopS: 10, PHYMbps: 54},
				{Name: "sta2", StartS: 10, StopS: 20, PHYMbps: 54}}},
		Flows: []Series{steadyFlow("sta1", 0, 10, 20), steadyFlow("sta2", 10, 20, 20)},
	}
}

// The aggregate of terminals that never sent at the same time is what the
// medium carried while any of them was scheduled, not the sum of their rates
// (the dynamic preset reported 30.7 Mbit/s on a 24 Mbit/s medium that way).
func TestAggregateOverUnionOfWindows(t *testing.T) {
	rs := Summarize(staggeredRun(), DefaultLossRule())
	if !near(rs.AggregateMbps, 20) {
		t.Errorf("aggregate %.2f Mbit/s, want 20 (two 20 Mbit/s stations one after the other)", rs.AggregateMbps)
	}
	if !rs.Valid {
		t.Errorf("run invalid: %s", rs.InvalidReason)
	}
	// Overlapping windows: [0,10] and [5,15] at 10 Mbit/s each = 200 Mbit over 15 s.
	r := staggeredRun()
	r.Info.Stations[1].StartS, r.Info.Stations[1].StopS = 5, 15
	r.Flows = []Series{steadyFlow("sta1", 0, 10, 10), steadyFlow("sta2", 5, 15, 10)}
	if got := Summarize(r, DefaultLossRule()).AggregateMbps; !near(got, 200.0/15) {
		t.Errorf("overlapping windows: aggregate %.3f, want %.3f", got, 200.0/15)
	}
}

func TestCapacityCeiling(t *testing.T) {
	for _, tc := range []struct {
		name     string
		info     RunInfo
		min, max float64
	}{
		// One 802.11g station alone: Bianchi's N = 1 saturation is 29.7 Mbit/s
		// for 1460 B; with 1500 B and no AP ACKs the ceiling sits just above.
		{"g", RunInfo{WLAN: schema.WLAN{PHY: "802.11g"}}, 29.5, 32},
		{"g, 100 Mbit/s wire", RunInfo{WLAN: schema.WLAN{PHY: "g"}, Wired: schema.Wired{RateBps: 100e6}}, 29.5, 32},
		{"ac, 100 Mbit/s wire", RunInfo{WLAN: schema.WLAN{PHY: "802.11ac"}, Wired: schema.Wired{RateBps: 100e6}}, 100, 100},
		{"ac, 1 Gbit/s wire", RunInfo{WLAN: schema.WLAN{PHY: "802.11ac"}, Wired: schema.Wired{RateBps: 1e9}}, 600, 866.7},
		{"b", RunInfo{WLAN: schema.WLAN{PHY: "802.11b"}}, 5, 7.5},
	} {
		c, ok, err := Capacity(tc.info)
		if err != nil || !ok || c < tc.min || c > tc.max {
			t.Errorf("%s: capacity %.2f (ok %v, err %v), want in [%g, %g]", tc.name, c, ok, err, tc.min, tc.max)
		}
	}
	if _, ok, err := Capacity(RunInfo{Backend: "veth", WLAN: schema.WLAN{PHY: "802.11g"}}); ok || err != nil {
		t.Errorf("veth backend (no medium emulated): ok %v err %v, want unknown", ok, err)
	}
	if _, ok, err := Capacity(RunInfo{}); ok || err != nil {
		t.Errorf("no PHY recorded: ok %v err %v, want unknown without error", ok, err)
	}
	if _, _, err := Capacity(RunInfo{WLAN: schema.WLAN{PHY: "802.11z"}}); err == nil {
		t.Error("unknown PHY accepted")
	}
}

// A run whose aggregate exceeds what the medium can carry is a measurement
// bug: the summary marks it invalid and says why.
func TestAggregateAboveCapacityIsInvalid(t *testing.T) {
	r := staggeredRun()
	r.Info.Stations[1].StartS, r.Info.Stations[1].StopS = 0, 10
	r.Flows = []Series{steadyFlow("sta1", 0, 10, 20), steadyFlow("sta2", 0, 10, 20)}
	rs := Summarize(r, DefaultLossRule())
	if rs.Valid || !strings.Contains(rs.InvalidReason, "above what the medium can carry") {
		t.Errorf("40 Mbit/s on 802.11g: valid %v, reason %q", rs.Valid, rs.InvalidReason)
	}
	if math.IsNaN(rs.CapacityMbps) {
		t.Error("capacity not reported")
	}
}

// Binned goodput never shows more than was acknowledged in a bin, even when
// samples are irregular (a late sample followed by a prompt one would make a
// per-sample rate spike).
func TestBinnedGoodputBoundedByAcked(t *testing.T) {
	s := Series{Key: FlowKey{Station: "sta1"}}
	// 10 Mbit/s delivered smoothly, but sampled at jittery times.
	times := []float64{0, 0.05, 0.3, 0.31, 0.32, 0.9, 0.91, 1.5, 1.52, 2.0, 2.6, 2.61, 3.0}
	for _, tm := range times {
		s.Samples = append(s.Samples, Sample{T: tm, BytesAcked: uint64(tm * 10e6 / 8)})
	}
	pts := BinnedGoodput([]Series{s}, 0, 3, 1)
	if len(pts) != 3 {
		t.Fatalf("%d bins, want 3", len(pts))
	}
	for _, p := range pts {
		if math.Abs(p.V-10) > 0.01 {
			t.Errorf("bin at %.1f s: %.3f Mbit/s, want 10", p.T, p.V)
		}
	}
	if got := BinnedGoodput(nil, 0, 0, 1); got != nil {
		t.Errorf("empty span: %v", got)
	}
}

// An acknowledgement burst (a hole filled after SACK recovery acknowledges
// seconds of data at once) is spread back over the bins before it: no bin
// above the medium's capacity, every station keeps its bytes.
func TestGoodputTracesSpreadBursts(t *testing.T) {
	burst := func(station string, mb float64) Series {
		s := Series{Key: FlowKey{Station: station, Src: station + ":1", Dst: "srv:5201"}}
		for k := 0; k <= 100; k++ { // 5 s at 20 Hz: nothing acknowledged, then mb at 4.5 s
			tm := float64(k) * 0.05
			var acked uint64
			if tm >= 4.5 {
				acked += uint64(mb * 1e6)
			}
			s.Samples = append(s.Samples, Sample{T: tm, Cwnd: 10, BytesAcked: acked})
		}
		return s
	}
	run := Run{Info: RunInfo{WLAN: schema.WLAN{PHY: "802.11g"},
		Stations: []Station{{Name: "sta1", StartS: 0, StopS: 5}, {Name: "sta2", StartS: 0, StopS: 5}}},
		Flows: []Series{burst("sta1", 6), burst("sta2", 2)}}
	capacity, _, _ := Capacity(run.Info)
	per, agg := GoodputTraces(run, 1)
	if len(agg) != 5 || len(per["sta1"]) != 5 {
		t.Fatalf("%d aggregate bins, %d for sta1; want 5", len(agg), len(per["sta1"]))
	}
	var total, s1, s2 float64
	for k, a := range agg {
		if a.V > capacity+1e-9 {
			t.Errorf("bin %d: %.2f Mbit/s above capacity %.2f", k, a.V, capacity)
		}
		total += a.V
		s1 += per["sta1"][k].V
		s2 += per["sta2"][k].V
		if math.Abs(per["sta1"][k].V+per["sta2"][k].V-a.V) > 1e-9 {
			t.Errorf("bin %d: stations %.3f + %.3f ≠ aggregate %.3f", k, per["sta1"][k].V, per["sta2"][k].V, a.V)
		}
	}
	if math.Abs(total-64) > 0.01 || math.Abs(s1-48) > 0.01 || math.Abs(s2-16) > 0.01 {
		t.Errorf("Mbit moved: total %.3f (want 64), sta1 %.3f (48), sta2 %.3f (16)", total, s1, s2)
	}
}

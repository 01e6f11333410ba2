package analysis

import (
	"math"
	"testing"
	"time"
)

// mk builds a series sampled every 100 ms.
func mk(cwnd []uint32, ca []uint8, acked []uint64, retrans []uint32) Series {
	s := Series{Key: FlowKey{Station: "sta1", Src: "10.77.1.2:40000", Dst: "10.77.1.1:5201"}}
	for i := range cwnd {
		smp := Sample{T: float64(i) / 10, Cwnd: cwnd[i], SRTT: time.Duration(i+1) * time.Millisecond, MinRTT: time.Millisecond}
		if ca != nil {
			smp.CAState = ca[i]
		}
		if acked != nil {
			smp.BytesAcked = acked[i]
		}
		if retrans != nil {
			smp.TotalRetrans = retrans[i]
		}
		s.Samples = append(s.Samples, smp)
	}
	return s
}

func TestLossEventsPenalizingAndModerate(t *testing.T) {
	cwnd := []uint32{10, 20, 20, 1, 5, 10, 20, 20}
	ca := []uint8{0, 0, 0, 4, 0, 0, 0, 0}
	tests := []struct {
		name        string
		acked       []uint64
		pre, during float64
		class       string
	}{
		// before: 200 kB in 0.2 s = 8 Mbit/s; from 0.2 to 0.6 s: 80 kB = 1.6 Mbit/s.
		{"penalizing", []uint64{0, 100e3, 200e3, 210e3, 220e3, 240e3, 280e3, 380e3}, 8, 1.6, Penalizing},
		// throughput steady at 4 Mbit/s through the collapse.
		{"moderate", []uint64{0, 50e3, 100e3, 150e3, 200e3, 250e3, 300e3, 350e3}, 4, 4, Moderate},
	}
	for _, tt := range tests {
		evs := LossEvents(mk(cwnd, ca, tt.acked, nil), DefaultLossRule())
		if len(evs) != 1 {
			t.Fatalf("%s: %d events, want 1: %+v", tt.name, len(evs), evs)
		}
		e := evs[0]
		if !near(e.T, 0.3) || e.CwndBefore != 20 || e.CwndAfter != 1 || e.CAState != 4 {
			t.Errorf("%s: event %+v, want at 0.3 s from 20 to 1 in Loss", tt.name, e)
		}
		if e.SRTT != 3*time.Millisecond {
			t.Errorf("%s: SRTT at loss %v, want 3ms (the sample before the collapse)", tt.name, e.SRTT)
		}
		if !e.Rebuilt || !near(e.RebuildS, 0.3) || !near(e.EndT, 0.6) {
			t.Errorf("%s: rebuilt %v in %g s ending %g, want true 0.3 0.6", tt.name, e.Rebuilt, e.RebuildS, e.EndT)
		}
		if !near(e.PreMbps, tt.pre) || !near(e.DuringMbps, tt.during) || e.Class != tt.class {
			t.Errorf("%s: pre %g during %g class %s, want %g %g %s", tt.name, e.PreMbps, e.DuringMbps, e.Class, tt.pre, tt.during, tt.class)
		}
		wantMB := (tt.pre - tt.during) * 0.4 / 8
		if !near(e.DeficitMB, wantMB) {
			t.Errorf("%s: deficit %g MB, want %g", tt.name, e.DeficitMB, wantMB)
		}
	}
}

func TestLossEventsDetection(t *testing.T) {
	lin := func(n int) []uint64 {
		out := make([]uint64, n)
		for i := range out {
			out[i] = uint64(i) * 10e3
		}
		return out
	}
	tests := []struct {
		name    string
		cwnd    []uint32
		ca      []uint8
		retrans []uint32
		want    int
	}{
		{"bound lowered, no loss", []uint32{20, 20, 5, 5}, []uint8{0, 0, 0, 0}, nil, 0},
		{"halving with retransmissions", []uint32{20, 20, 10, 12}, []uint8{0, 0, 0, 0}, []uint32{0, 0, 1, 1}, 1},
		{"halving in recovery", []uint32{20, 20, 10, 12}, []uint8{0, 0, 3, 0}, nil, 1},
		{"CWR is not loss", []uint32{20, 20, 10, 12}, []uint8{0, 0, 2, 0}, nil, 0},
		{"small decrease in recovery", []uint32{20, 20, 14, 14}, []uint8{0, 0, 3, 0}, nil, 0},
		{"two collapses", []uint32{20, 1, 5, 1, 30}, []uint8{0, 4, 0, 4, 0}, nil, 2},
		{"already small", []uint32{2, 1, 2}, []uint8{0, 4, 0}, nil, 1}, // 2→1 is a ≥ 50 % drop
	}
	for _, tt := range tests {
		got := LossEvents(mk(tt.cwnd, tt.ca, lin(len(tt.cwnd)), tt.retrans), DefaultLossRule())
		if len(got) != tt.want {
			t.Errorf("%s: %d events, want %d: %+v", tt.name, len(got), tt.want, got)
		}
	}
}

func TestLossEventsWindowEndsAtNextCollapse(t *testing.T) {
	s := mk([]uint32{20, 1, 5, 1, 30}, []uint8{0, 4, 0, 4, 0}, []uint64{0, 10e3, 20e3, 30e3, 40e3}, nil)
	evs := LossEvents(s, DefaultLossRule())
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2", len(evs))
	}
	if evs[0].Rebuilt || !math.IsNaN(evs[0].RebuildS) || !near(evs[0].EndT, 0.3) {
		t.Errorf("first event %+v: want not rebuilt, window ending at the second collapse (0.3 s)", evs[0])
	}
	// The first event has only the sample before it as history: no reference throughput.
	if evs[0].Class != Unknown {
		t.Errorf("first event class %s, want %s", evs[0].Class, Unknown)
	}
	// The second event's "before" is cwnd 5, rebuilt at 0.4 s.
	if !evs[1].Rebuilt || evs[1].CwndBefore != 5 || !near(evs[1].RebuildS, 0.1) {
		t.Errorf("second event %+v: want rebuilt to 5 after 0.1 s", evs[1])
	}
}

func TestFlowCounters(t *testing.T) {
	s := mk([]uint32{10, 10, 1, 1, 10, 1, 10}, []uint8{4, 4, 0, 4, 4, 0, 4}, []uint64{0, 1000, 70000, 70000, 80000, 90000, 100000},
		[]uint32{2, 3, 3, 7, 1, 1, 4})
	if got := LossEpisodes(s); got != 3 {
		t.Errorf("LossEpisodes = %d, want 3 (first sample, t=0.3, t=0.6)", got)
	}
	// 2 (before the recording) +1 +4, reset to 1 (+1), +3
	if got := Retransmissions(s); got != 11 {
		t.Errorf("Retransmissions = %d, want 11", got)
	}
	if got := AckedBytes(s); got != 100000 {
		t.Errorf("AckedBytes = %d, want 100000", got)
	}
	if !IsDataFlow(s) {
		t.Errorf("100 kB flow should be a data flow")
	}
	tp := AckedThroughput(s)
	// (70000-1000)·8 / 0.1 s = 5.52 Mbit/s at t = 0.2
	if len(tp) != 6 || !near(tp[1].T, 0.2) || !near(tp[1].V, 5.52) {
		t.Errorf("AckedThroughput = %v, want 6 points, second (0.2, 5.52)", tp)
	}
	srtt := SRTTsMs(s)
	if len(srtt) != 7 || srtt[0] != 1 || srtt[6] != 7 {
		t.Errorf("SRTTsMs = %v", srtt)
	}
}

func TestSummarizeLossEvents(t *testing.T) {
	ev := func(class string, srttMs, rebuild, pre, def float64) LossEvent {
		return LossEvent{Class: class, SRTT: time.Duration(srttMs * float64(time.Millisecond)), Rebuilt: !math.IsNaN(rebuild),
			RebuildS: rebuild, PreMbps: pre, DeficitMbps: def}
	}
	got := SummarizeLossEvents([]LossEvent{
		ev(Penalizing, 25, 2.11, 17, 10), ev(Penalizing, 30, math.NaN(), 17, 7), ev(Penalizing, 20, 2.5, 10, 5),
		ev(Moderate, 2, 1.57, 17, 1),
	})
	if len(got) != 2 || got[0].Class != Penalizing || got[1].Class != Moderate {
		t.Fatalf("%+v", got)
	}
	p := got[0]
	// SRTT 20,25,30 → 25; rebuild over the rebuilt two: (2.11+2.5)/2; deficits 5,7,10 → 7; relative 10/17, 7/17, 5/10 → 0.5
	if p.Count != 3 || p.Rebuilt != 2 || !near(p.MedianSRTTms, 25) || !near(p.MedianRebuildS, 2.305) || !near(p.MedianDeficitMbps, 7) || !near(p.MedianRelDeficit, 0.5) {
		t.Errorf("penalizing %+v", p)
	}
}

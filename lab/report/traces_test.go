package report

import (
	"strconv"
	"testing"
	"time"

	"github.com/coopcc/coopcc/lab/analysis"
	"github.com/coopcc/coopcc/schema"
)

// The goodput trace comes from what was acknowledged, never from iperf3's
// client intervals: for an upload those count bytes written into the socket,
// which showed 35 Mbit/s on a 24 Mbit/s medium while the socket buffer filled.
func TestTraceGoodputNeverAboveAcked(t *testing.T) {
	flow := analysis.Series{Key: analysis.FlowKey{Station: "sta1", Src: "10.0.0.1:40000", Dst: "10.0.1.1:5201"}}
	for k := 0; k <= 200; k++ { // 10 s at 20 Hz, 20 Mbit/s
		tm := float64(k) * 0.05
		flow.Samples = append(flow.Samples, analysis.Sample{T: tm, Cwnd: 10, SRTT: 5e6, BytesAcked: uint64(tm * 20e6 / 8)})
	}
	run := analysis.Run{
		Info: analysis.RunInfo{ID: "mode=cubic,n=1,delay=4ms,rep=1", Mode: "cubic", N: 1, Valid: true,
			WLAN:     schema.WLAN{PHY: "802.11g"},
			Stations: []analysis.Station{{Name: "sta1", StartS: 0, StopS: 10, PHYMbps: 54}}},
		Iperf: map[string]analysis.Iperf{"sta1": {Station: "sta1", ReceivedBytes: 25e6, ReceivedSeconds: 10,
			Intervals: []analysis.Interval{{Start: 0, End: 1, Bytes: 35e6 / 8}, {Start: 1, End: 2, Bytes: 0}, {Start: 2, End: 3, Bytes: 10e6 / 8}}}},
		Flows: []analysis.Series{flow},
	}
	sum := analysis.Summarize(run, analysis.DefaultLossRule())
	m := &model{runs: []analysis.Run{run}, sums: []analysis.RunSummary{sum}, series: map[string]int{}}
	f, err := m.traces(0)
	if err != nil || f == nil {
		t.Fatalf("traces: %v, %v", f, err)
	}
	n := 0
	for _, r := range f.Rows {
		if r[2] != "goodput_mbps" && r[2] != "aggregate_goodput_mbps" {
			continue
		}
		n++
		v, err := strconv.ParseFloat(r[3], 64)
		if err != nil || v > 20.01 {
			t.Errorf("row %v: %v Mbit/s above the 20 Mbit/s acknowledged", r, v)
		}
	}
	if n < 20 {
		t.Errorf("%d goodput rows, want a per-station and an aggregate series of 10 bins each", n)
	}
}

// The vehicle figure draws the bounds of the agent that bounded the
// station's download: here the server's (papers/002's lower bound at the
// sender), found by the station's address.
func TestLossTraceDrawsTheServersLowerBound(t *testing.T) {
	flow := analysis.Series{Key: analysis.FlowKey{Station: "sta1", Src: "10.0.1.1:5201", Dst: "10.0.0.1:40000"}}
	for k := 0; k <= 100; k++ {
		tm := float64(k) * 0.1
		flow.Samples = append(flow.Samples, analysis.Sample{T: tm, Cwnd: 20, SRTT: 5e6, BytesAcked: uint64(tm * 1e6)})
	}
	t0 := 1_800_000_000.0
	at := func(s float64) time.Time { return time.UnixMicro(int64((t0 + s) * 1e6)) }
	run := analysis.Run{
		Info: analysis.RunInfo{ID: "mode=static,n=1,delay=0ms,rep=1", Mode: "static", N: 1, Valid: true, ServerAgent: true,
			Direction: "down", WLAN: schema.WLAN{PHY: "802.11g"},
			Stations: []analysis.Station{{Name: "sta1", Addr: "10.0.0.1", StartS: 0, StopS: 10, PHYMbps: 54, Direction: "down"}}},
		Flows: []analysis.Series{flow},
		Bounds: map[string][]analysis.BoundEvent{schema.ServerName: {
			{T: at(0.5), Lo: 16}, {T: at(10), Lo: 0}}},
		T0: t0,
	}
	sum := analysis.Summarize(run, analysis.DefaultLossRule())
	m := &model{runs: []analysis.Run{run}, sums: []analysis.RunSummary{sum}, series: map[string]int{}}
	f, err := m.lossTrace(0, "sta1")
	if err != nil || f == nil {
		t.Fatalf("lossTrace: %v, %v", f, err)
	}
	var lo []string
	for _, r := range f.Rows {
		if r[1] == "bound_lo" {
			lo = append(lo, r[2])
		}
	}
	if len(lo) != 2 || lo[0] != "16" || lo[1] != "0" {
		t.Errorf("bound_lo rows %v, want 16 then 0", lo)
	}
}

// The trace figure draws the emulator's medium.csv: the busy share and who
// had the air, the managed stations together against the others.
func TestTraceAirPanel(t *testing.T) {
	flow := analysis.Series{Key: analysis.FlowKey{Station: "sta1", Src: "10.0.0.1:40000", Dst: "10.0.1.1:5201"}}
	for k := 0; k <= 20; k++ {
		tm := float64(k) * 0.05
		flow.Samples = append(flow.Samples, analysis.Sample{T: tm, Cwnd: 10, SRTT: 5e6, BytesAcked: uint64(tm * 1e6)})
	}
	run := analysis.Run{
		Flows: []analysis.Series{flow},
		Info: analysis.RunInfo{ID: "mode=coop,n=2,delay=256ms,managed=1,rep=1", Mode: "coop", N: 2, Valid: true,
			WLAN: schema.WLAN{PHY: "802.11g"},
			Stations: []analysis.Station{{Name: "sta1", Managed: true, StopS: 1, PHYMbps: 54},
				{Name: "sta2", StopS: 1, PHYMbps: 54}}},
		Emu: &analysis.Emu{Medium: []analysis.MediumSample{
			{T: 0.1, Busy: 0.8, Share: map[string]float64{"sta1": 0.2, "sta2": 0.55, "ap": 0.05}},
			{T: 0.2, Busy: 0.8, Share: map[string]float64{"sta1": 0.3, "sta2": 0.45, "ap": 0.05}}}},
	}
	sum := analysis.Summarize(run, analysis.DefaultLossRule())
	m := &model{runs: []analysis.Run{run}, sums: []analysis.RunSummary{sum}, series: map[string]int{}}
	f, err := m.traces(0)
	if err != nil || f == nil {
		t.Fatalf("traces: %v, %v", f, err)
	}
	got := map[string]string{}
	for _, r := range f.Rows {
		if r[2] == "air_share" || r[2] == "busy_share" {
			got[r[0]+" "+r[1]] = r[3]
		}
	}
	if got["0.2 managed"] != "0.3" || got["0.2 others"] != "0.45" || got["0.1 medium"] != "0.8" || got["0.1 ap"] != "0.05" {
		t.Errorf("air rows %v: want the managed station's, the others' and the AP's shares and the busy share", got)
	}
}

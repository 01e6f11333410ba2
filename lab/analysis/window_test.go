package analysis

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseWindow(t *testing.T) {
	for in, want := range map[string]Window{"10s..25s": {10, 25}, "10..25": {10, 25}, "0..1m30s": {0, 90}, "2.5s..3s": {2.5, 3}} {
		got, err := ParseWindow(in)
		if err != nil || got != want {
			t.Errorf("ParseWindow(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"10s", "25s..10s", "-1..3", "a..3s", "3s..3s"} {
		if _, err := ParseWindow(in); err == nil {
			t.Errorf("ParseWindow(%q) accepted", in)
		}
	}
	if s := (Window{10, 25}).String(); s != "10s..25s" {
		t.Errorf("String() = %q", s)
	}
}

// A flow in slow start for 10 s, then at a steady rate: the window 10..25
// measures the steady rate; a station scheduled only before the window is
// left out, and a window no station is scheduled in invalidates the run.
func TestWindowClip(t *testing.T) {
	steady := Series{Key: FlowKey{Station: "sta1", Src: "a:1", Dst: "s:5201"}}
	for t := 0.0; t <= 25+1e-9; t += 0.5 {
		b := 0.5e6 * t // 4 Mbit/s in slow start
		if t > 10 {
			b = 5e6 + 2.5e6*(t-10) // 20 Mbit/s from 10 s on
		}
		steady.Samples = append(steady.Samples, Sample{T: t, BytesAcked: uint64(b)})
	}
	early := Series{Key: FlowKey{Station: "sta2", Src: "b:1", Dst: "s:5201"}}
	for t := 0.0; t <= 5+1e-9; t += 0.5 {
		early.Samples = append(early.Samples, Sample{T: t, BytesAcked: uint64(1e6 * t)})
	}
	run := Run{
		Info: RunInfo{ID: "mode=cubic,n=2,delay=4ms,rep=1", Mode: "cubic", N: 2, Valid: true, Stations: []Station{
			{Name: "sta1", StartS: 0, StopS: 25}, {Name: "sta2", StartS: 0, StopS: 5}}},
		Flows: []Series{steady, early},
	}
	whole := Summarize(run, DefaultLossRule())
	if len(whole.Stations) != 2 || !near(whole.Stations[0].GoodputMbps, 0.4*4+0.6*20) {
		t.Fatalf("whole window: %+v", whole.Stations)
	}
	rs := Summarize(Window{10, 25}.Clip(run), DefaultLossRule())
	if len(rs.Stations) != 1 || !near(rs.Stations[0].GoodputMbps, 20) || !near(rs.AggregateMbps, 20) || !rs.Valid {
		t.Errorf("window 10..25: stations %+v, aggregate %g, valid %t; want sta1 alone at 20", rs.Stations, rs.AggregateMbps, rs.Valid)
	}
	if run.Info.Stations[0].StartS != 0 || len(run.Info.Stations) != 2 {
		t.Errorf("Clip changed its argument: %+v", run.Info.Stations)
	}
	out := Window{30, 40}.Clip(run)
	if out.Info.Valid || !strings.Contains(out.Info.InvalidReason, "30s..40s") {
		t.Errorf("window after the schedule: valid %t, reason %q", out.Info.Valid, out.Info.InvalidReason)
	}
}

// SRTT and goodput per second: a flow whose SRTT rises when its rate falls
// correlates negatively, one whose SRTT rises with its rate positively.
func TestSRTTGoodputCorr(t *testing.T) {
	mk := func(sign float64) Series {
		var s Series
		var acked float64
		for t := 0.0; t < 10; t += 0.1 {
			rate := 1e6 // bytes/s
			if int(t)%2 == 1 {
				rate = 3e6
			}
			srtt := 100 + sign*20*(rate/1e6)
			s.Samples = append(s.Samples, Sample{T: t, BytesAcked: uint64(acked), SRTT: time.Duration(srtt * float64(time.Millisecond))})
			acked += rate * 0.1
		}
		return s
	}
	if c := SRTTGoodputCorr([]Series{mk(-1)}, 0, 9); !(c < -0.9) {
		t.Errorf("SRTT falling with rate: corr %g, want about -1", c)
	}
	if c := SRTTGoodputCorr([]Series{mk(+1)}, 0, 9); !(c > 0.9) {
		t.Errorf("SRTT rising with rate: corr %g, want about +1", c)
	}
	if c := SRTTGoodputCorr(nil, 0, 9); !math.IsNaN(c) {
		t.Errorf("no flow: %g, want NaN", c)
	}
}

func TestMediumOf(t *testing.T) {
	m, ok := MediumOf(&Emu{Stations: []EmuStation{
		{Station: "ap", TxFrames: 100, QueueDrops: 300},
		{Station: "sta1", TxFrames: 400, QueueDrops: 5, RetryDrops: 2},
		{Station: "sta2", TxFrames: 100, RetryDrops: 1}}, Status: &EmuStatus{BusyFraction: 0.75}})
	if !ok || m.APDropShare() != 0.75 || m.DataPerAPFrame() != 5 || m.StaQueueDrops != 5 || m.StaRetryDrops != 3 || m.BusyFraction != 0.75 {
		t.Errorf("MediumOf: %+v ok %t, drop share %g, per AP frame %g", m, ok, m.APDropShare(), m.DataPerAPFrame())
	}
	if _, ok := MediumOf(nil); ok {
		t.Error("MediumOf(nil) ok")
	}
}

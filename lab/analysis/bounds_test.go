package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/coopcc/coopcc/schema"
)

func TestStationBounds(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	ev := func(dst string, lo uint32) BoundEvent { return BoundEvent{T: t0, Dst: dst, Lo: lo} }
	stations := []Station{{Name: "sta1", Addr: "10.0.0.1"}, {Name: "sta2", Addr: "10.0.0.2"}}
	own := Run{Info: RunInfo{Stations: stations}, Bounds: map[string][]BoundEvent{"sta1": {ev("10.0.1.1", 4)}}}
	if got := StationBounds(own, "sta1"); len(got) != 1 || got[0].Lo != 4 {
		t.Errorf("a station's own agent: %+v", got)
	}
	if got := StationBounds(own, "sta2"); got != nil {
		t.Errorf("a station without an agent: %+v", got)
	}
	srv := Run{Info: RunInfo{Stations: stations, ServerAgent: true}, Bounds: map[string][]BoundEvent{
		schema.ServerName: {ev("", 16), ev("10.0.0.2", 8), ev("10.0.0.1", 12)}}}
	got := StationBounds(srv, "sta1")
	if len(got) != 2 || got[0].Lo != 16 || got[1].Lo != 12 {
		t.Errorf("the server's agent, sta1: %+v; want its default and sta1's events", got)
	}
	srv.Info.ServerAgent = false
	if got := StationBounds(srv, "sta1"); got != nil {
		t.Errorf("server events in a run without a server agent: %+v", got)
	}
}

func TestCompetingTimes(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	run := Run{T0: float64(t0.Unix())}
	ev := func(s float64, mode string) BoundEvent {
		return BoundEvent{T: t0.Add(time.Duration(s * float64(time.Second))), Mode: mode}
	}
	evs := []BoundEvent{ev(1, "cooperative"), ev(2, "cooperative"), ev(5, "competing"), ev(6, "competing"),
		ev(9, "cooperative"), ev(20, "competing"), ev(24, "")}
	for _, tc := range []struct {
		from, to     float64
		share, first float64
	}{
		{0, 25, (4 + 4) / 25.0, 5}, // 5–9 s and 20–24 s (control off at 24 s)
		{6, 10, 3 / 4.0, 0},        // in force at the window's start
		{10, 20, 0, math.NaN()},    // never in the window
		{0, 22, (4 + 2) / 22.0, 5}, // the window ends inside an off period
	} {
		share, first := CompetingTimes(run, evs, tc.from, tc.to)
		if math.Abs(share-tc.share) > 1e-9 || !(first == tc.first || math.IsNaN(first) && math.IsNaN(tc.first)) {
			t.Errorf("window %v–%v s: share %v, first %v; want %v, %v", tc.from, tc.to, share, first, tc.share, tc.first)
		}
	}
	if share, first := CompetingTimes(run, []BoundEvent{ev(1, ""), ev(3, "")}, 0, 10); !math.IsNaN(share) || !math.IsNaN(first) {
		t.Errorf("events that name no mode: share %v, first %v; want NaN, NaN", share, first)
	}
}

package analysis

import (
	"math"
	"reflect"
	"testing"
	"time"
)

// followRun is a run of 60 s whose clock starts at Unix time 1000: sta1
// sends throughout, sta2 from 10 s, sta3 from 20 to 40 s, and sta4 (no
// agent) from 30 s, which changes no agent's N.
func followRun(bounds map[string][]BoundEvent) Run {
	r := Run{T0: 1000, Bounds: bounds}
	r.Info.LengthS = 60
	r.Info.Stations = []Station{
		{Name: "sta1", Agent: true, StartS: 0, StopS: 60},
		{Name: "sta2", Agent: true, StartS: 10, StopS: 60},
		{Name: "sta3", Agent: true, StartS: 20, StopS: 40},
		{Name: "sta4", Agent: false, StartS: 30, StopS: 60},
	}
	return r
}

// ev is a bound event at run time t saying n.
func ev(t float64, n int) BoundEvent {
	return BoundEvent{T: time.UnixMicro(int64((1000 + t) * 1e6)), N: n}
}

func TestFollowN(t *testing.T) {
	r := followRun(map[string][]BoundEvent{
		"sta1": {ev(0.5, 1), ev(13, 2), ev(25, 3), ev(45, 2)},
		"sta2": {ev(10.5, 2)},          // never sees sta3; already at 2 when it leaves
		"sta3": {ev(19, 3), ev(40, 3)}, // heard the others before its own start
	})
	got := FollowN(r)
	want := []NChange{
		{At: 10, From: 1, To: 2, Agents: 2, Lags: []float64{0.5, 3}, Until: 20},
		{At: 20, From: 2, To: 3, Agents: 3, Lags: []float64{0, 5}, Until: 40},
		{At: 40, From: 3, To: 2, Agents: 2, Lags: []float64{0, 5}, Until: 60},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d changes %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		for j := range g.Lags {
			g.Lags[j] = math.Round(g.Lags[j]*1e3) / 1e3
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("change %d: got %+v, want %+v", i, g, w)
		}
	}
	if got[1].Followed() != 2 || got[1].MaxLag() != 5 {
		t.Errorf("change at 20 s: followed %d, max lag %v", got[1].Followed(), got[1].MaxLag())
	}
}

func TestFollowNIgnoresEventsAfterTheNextChange(t *testing.T) {
	// sta1 learns of sta2 only at 20 s, when sta3 has joined too: the
	// change at 10 s was not followed in its interval.
	r := followRun(map[string][]BoundEvent{"sta1": {ev(1, 1), ev(20, 2), ev(21, 3)}})
	got := FollowN(r)
	if len(got) != 3 || got[0].Followed() != 0 || !math.IsNaN(got[0].MaxLag()) {
		t.Fatalf("change at 10 s: %+v", got)
	}
	if got[1].Followed() != 1 || math.Abs(got[1].Lags[0]-1) > 1e-6 {
		t.Fatalf("change at 20 s: %+v", got[1])
	}
}

func TestFollowNWithoutAgents(t *testing.T) {
	r := followRun(nil)
	if got := FollowN(r); got != nil {
		t.Fatalf("a run without bound events: %+v", got)
	}
	r = followRun(map[string][]BoundEvent{"sta1": {ev(1, 1)}})
	r.T0 = 0 // no clock to place the events on
	if got := FollowN(r); got != nil {
		t.Fatalf("a run without a clock: %+v", got)
	}
}

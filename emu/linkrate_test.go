package emu

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/coopcc/coopcc/emu/dcf"
)

// deliver adds frames delivered at rate r to the node's cumulative counters.
func deliver(n *dcf.Node, r float64, frames uint64) {
	if n.Stats.ByRate == nil {
		n.Stats.ByRate = map[float64]*dcf.RateStats{}
	}
	if n.Stats.ByRate[r] == nil {
		n.Stats.ByRate[r] = &dcf.RateStats{}
	}
	n.Stats.ByRate[r].Frames += frames
}

// The meter gives each interval's frame-weighted mean rate: a constant rate
// is that rate, a switch from 54 to 6 within an interval is the mean of the
// interval's frames only, and an idle interval keeps the last value (0
// before the first frame).
func TestRateMeterIntervals(t *testing.T) {
	a, b := &dcf.Node{}, &dcf.Node{}
	stas := []*dcf.Node{a, b}
	var m rateMeter
	step := func(wantA, wantB float64) {
		t.Helper()
		got := m.updateNodes(stas)
		if math.Abs(got[0]-wantA) > 1e-9 || math.Abs(got[1]-wantB) > 1e-9 {
			t.Fatalf("rates %v, want [%v %v]", got, wantA, wantB)
		}
	}
	step(0, 0) // nothing delivered yet
	deliver(a, 54, 100)
	step(54, 0)
	deliver(a, 54, 37)
	step(54, 0) // constant rate
	deliver(a, 54, 10)
	deliver(a, 6, 30)
	deliver(b, 24, 5)
	step((54*10+6*30)/40.0, 24) // the interval's 40 frames, not the 177 so far
	step((54*10+6*30)/40.0, 24) // idle: the last value stays
	deliver(a, 6, 3)
	step(6, 24)
}

func TestRoundMbps(t *testing.T) {
	for _, c := range []struct {
		r    float64
		want uint32
	}{{0, 0}, {-1, 0}, {math.NaN(), 0}, {0.2, 1}, {5.5, 6}, {53.6, 54}, {433.3, 433}, {1e12, math.MaxUint32 - 1}} {
		if got := roundMbps(c.r); got != c.want {
			t.Errorf("roundMbps(%v) = %d, want %d", c.r, got, c.want)
		}
	}
}

// The setter sets a station only when its rounded rate changes, skips
// stations with no frame yet, and counts failures, telling only the first.
func TestSpeedSetterSetsChangesOnly(t *testing.T) {
	var calls []string
	fail := false
	var warn strings.Builder
	s := newSpeedSetter(2, func(i int, mbps uint32) error {
		calls = append(calls, strconv.Itoa(i)+":"+strconv.Itoa(int(mbps)))
		if fail {
			return errors.New("refused")
		}
		return nil
	}, &warn)
	s.apply([]float64{54, 0})
	s.apply([]float64{53.8, 0}) // rounds to 54: no call
	s.apply([]float64{36.2, 12})
	fail = true
	s.apply([]float64{6, 12})
	s.apply([]float64{9, 11})
	if got := strings.Join(calls, " "); got != "0:54 0:36 1:12 0:6 0:9 1:11" {
		t.Errorf("sets %q", got)
	}
	if s.Errors != 3 || s.First == nil || strings.Count(warn.String(), "refused") != 1 {
		t.Errorf("errors %d, first %v, warnings %q", s.Errors, s.First, warn.String())
	}
}

// offer never blocks, and the goroutine applies the latest snapshot (a
// newer one replaces an unread older one).
func TestSpeedSetterOfferKeepsLatest(t *testing.T) {
	got := make(chan uint32, 100)
	s := newSpeedSetter(1, func(_ int, mbps uint32) error { got <- mbps; return nil }, nil)
	snap := []float64{0}
	for _, r := range []float64{6, 9, 12, 54} { // nobody reads yet: offer must not block
		snap[0] = r
		s.offer(snap)
	}
	snap[0] = 1 // the setter holds a copy
	s.start()
	defer s.stop()
	if v := <-got; v != 54 {
		t.Fatalf("first set %d, want the latest snapshot 54", v)
	}
	s.stop()
	if len(got) != 0 {
		t.Errorf("%d more sets after the latest snapshot", len(got))
	}
}

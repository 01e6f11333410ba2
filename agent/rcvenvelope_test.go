package agent

import (
	"net/netip"
	"testing"
	"time"
)

func TestRcvEnvelopeHoldsTheTopOfTheCycle(t *testing.T) {
	e := newRcvEnvelope(4 * time.Second)
	d := netip.MustParseAddr("10.0.0.1")
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// coop's probe cycle as the lab logged it (one value per 0.5 s tick).
	cycle := []uint32{58, 58, 77, 84, 60, 58, 73, 79, 45, 67, 73, 76, 60, 73}
	var got []uint32
	changes := 0
	prev := uint32(0)
	for i, hi := range cycle {
		h := e.set(d, hi, at(float64(i)*0.5))
		got = append(got, h)
		if h != prev {
			changes++
		}
		prev = h
	}
	// Rises follow at once (the bound may loosen); falls wait until the
	// larger value has been out of force for the whole window.
	want := []uint32{58, 58, 77, 84, 84, 84, 84, 84, 84, 84, 84, 84, 79, 79}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("tick %d: clamp %d, want %d (all: %v)", i, got[i], want[i], got)
		}
	}
	if changes > 5 {
		t.Errorf("%d clamp changes for %d ticks of the cycle, want few", changes, len(cycle))
	}
	// A lower bound that stays is reached once the window has passed,
	// through at() alone (the agent's heartbeat), without another set.
	e.set(d, 40, at(10))
	if h := e.at(d, at(13.9)); h != 73 {
		t.Errorf("3.9 s after 73 was replaced: %d, want 73 still", h)
	}
	if h := e.at(d, at(14.1)); h != 40 {
		t.Errorf("4.1 s after: %d, want 40", h)
	}
	// No bound releases at once and forgets the history.
	if h := e.set(d, 0, at(14.2)); h != 0 {
		t.Errorf("release: %d, want 0", h)
	}
	if h := e.set(d, 10, at(14.3)); h != 10 {
		t.Errorf("after a release the history is gone: %d, want 10", h)
	}
}

// bothSides sets the receive clamp only when the envelope changes and lowers
// it from Heartbeat.
func TestBothSidesReceiveFollowsTheEnvelope(t *testing.T) {
	send, recv := &memDatapath{}, &memDatapath{}
	now := time.Unix(1000, 0)
	b := newBothSides(send, recv, 2*time.Second)
	b.now = func() time.Time { return now }
	step := func(hi uint32) {
		t.Helper()
		if err := b.Set(dst1, DPBounds{Lo: hi / 2, Hi: hi}); err != nil {
			t.Fatal(err)
		}
		if err := b.Heartbeat(); err != nil {
			t.Fatal(err)
		}
		now = now.Add(500 * time.Millisecond)
	}
	step(50)
	step(60)
	step(40)
	if send.bounds[dst1] != (DPBounds{Lo: 20, Hi: 40}) || recv.bounds[dst1] != (DPBounds{Hi: 60}) {
		t.Fatalf("send %+v recv %+v: want the send side as set, the receive side at the envelope 60", send.bounds[dst1], recv.bounds[dst1])
	}
	sets := recv.sets
	for range 6 { // 3 s at 40: the envelope falls to 40 through Heartbeat
		if err := b.Heartbeat(); err != nil {
			t.Fatal(err)
		}
		now = now.Add(500 * time.Millisecond)
	}
	if recv.bounds[dst1] != (DPBounds{Hi: 40}) || recv.sets != sets+1 {
		t.Fatalf("recv %+v after %d sets, want Hi 40 after exactly one more", recv.bounds[dst1], recv.sets-sets)
	}
	if err := b.Delete(dst1); err != nil {
		t.Fatal(err)
	}
	if _, ok := recv.bounds[dst1]; ok {
		t.Fatal("receive bound not deleted")
	}
}

package policy

import (
	"fmt"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/policy/fairness"
)

func newCoopT(t *testing.T, p Params) *coop {
	t.Helper()
	pol, err := New("coop", p)
	if err != nil {
		t.Fatal(err)
	}
	return pol.(*coop)
}

// inflatedPeer is a network-limited peer that sees the given queueing delay.
func inflatedPeer(base, queue time.Duration, rate float64) PeerView {
	return PeerView{ActiveFlows: 1, SRTT: base + queue, MinRTT: base, DeliveryRate: rate}
}

func TestCoopEqualRatesAcrossBaseRTTs(t *testing.T) {
	// The share arithmetic at the target delay: without the elasticity
	// probe, which sizes the first windows for the queue as it is.
	c := newCoopT(t, Params{Coop: CoopParams{DisableSwitchOff: true}})
	q := time.Second // inflated: the first decision measures the capacity
	v := View{Now: t0,
		Flows: []FlowView{
			{Dst: dstA, MSS: 1448, SRTT: 4*time.Millisecond + q, MinRTT: 4 * time.Millisecond, DeliveryRate: 20e6},
			{Dst: dstB, MSS: 1448, SRTT: 256*time.Millisecond + q, MinRTT: 256 * time.Millisecond, DeliveryRate: 20e6},
		},
		Peers: []PeerView{inflatedPeer(130*time.Millisecond, q, 40e6)},
	}
	d := c.Decide(v)
	if !d.Active {
		t.Fatalf("inactive: %q", d.Reason)
	}
	// Capacity = 80e6 B/s measured, two terminals → 40e6 for us, 20e6 per flow.
	ra, rb := c.targets[dstA], c.targets[dstB]
	if math.Abs(ra-rb) > 1e-6*ra || math.Abs(ra-20e6) > 1 {
		t.Fatalf("rate targets %v (4 ms) and %v (256 ms): want equal, 20e6", ra, rb)
	}
	// The windows give equal rates at the common target queueing delay.
	dStar := c.dStar.Seconds()
	xa := float64(d.PerDst[dstA].Hi) * 1448 / (0.004 + dStar)
	xb := float64(d.PerDst[dstB].Hi) * 1448 / (0.256 + dStar)
	if math.Abs(xa-xb)/xb > 0.01 {
		t.Fatalf("rates at target delay %v: %.0f vs %.0f B/s (hi %d, %d)", c.dStar, xa, xb, d.PerDst[dstA].Hi, d.PerDst[dstB].Hi)
	}
	if d.PerDst[dstA].Hi >= d.PerDst[dstB].Hi {
		t.Fatalf("hi(4 ms) %d >= hi(256 ms) %d", d.PerDst[dstA].Hi, d.PerDst[dstB].Hi)
	}

	// Across terminals: a 4 ms terminal and a 256 ms terminal get the same share.
	c2 := newCoopT(t, Params{})
	v2 := View{Now: t0,
		Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: 4*time.Millisecond + q, MinRTT: 4 * time.Millisecond, DeliveryRate: 1e6}},
		Peers: []PeerView{inflatedPeer(256*time.Millisecond, q, 3e6)},
	}
	c2.Decide(v2)
	if got := c2.targets[dstA]; math.Abs(got-2e6) > 1 {
		t.Fatalf("4 ms terminal's share %v, want half of 4e6", got)
	}
}

func TestCoopAppLimitedPeerReleasesShare(t *testing.T) {
	base, q := 256*time.Millisecond, time.Second
	mk := func(appLimited bool) float64 {
		c := newCoopT(t, Params{})
		ps := []PeerView{inflatedPeer(base, q, 1e6), inflatedPeer(base, q, 0.1e6)}
		ps[1].AppLimited = appLimited
		c.Decide(View{Now: t0,
			Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: 1e6}},
			Peers: ps})
		return c.targets[dstA]
	}
	bulk, released := mk(false), mk(true)
	// Capacity 2.1e6: three bulk terminals → 0.7e6 each; with the third
	// app-limited at 0.1e6 (+10 % headroom) the other two split 2.1e6 − 0.11e6.
	if math.Abs(bulk-0.7e6) > 1 {
		t.Fatalf("share with a bulk peer %v, want 0.7e6", bulk)
	}
	if math.Abs(released-0.995e6) > 1 {
		t.Fatalf("share with an app-limited peer %v, want 0.995e6", released)
	}
	// An idle peer (no active flows) is ignored entirely.
	c := newCoopT(t, Params{})
	c.Decide(View{Now: t0,
		Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: 1e6}},
		Peers: []PeerView{inflatedPeer(base, q, 1e6), {ActiveFlows: 0, DeliveryRate: 5e6}}})
	if got := c.targets[dstA]; math.Abs(got-1e6) > 1 {
		t.Fatalf("share with an idle peer %v, want 1e6", got)
	}
}

func TestCoopOwnAppLimitedFlowMayGrowToItsShare(t *testing.T) {
	base, q := 100*time.Millisecond, 500*time.Millisecond
	c := newCoopT(t, Params{})
	c.Decide(View{Now: t0,
		Flows: []FlowView{
			{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: 10e3, AppLimited: true},
			{Dst: dstB, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: 1.99e6},
		},
		Peers: []PeerView{inflatedPeer(base, q, 2e6)}})
	// Capacity 4e6; ours 2e6. The bulk flow gets 2e6 − 11e3; the
	// app-limited one is capped at what it would get as bulk (1e6), not at 11e3.
	if got := c.targets[dstB]; math.Abs(got-(2e6-11e3)) > 1 {
		t.Fatalf("bulk flow %v, want %v", got, 2e6-11e3)
	}
	if got := c.targets[dstA]; math.Abs(got-1e6) > 1 {
		t.Fatalf("app-limited flow's cap %v, want 1e6", got)
	}
}

func TestCoopBoundsShrinkAsRatioRises(t *testing.T) {
	// The control law alone: the inputs are not a closed loop (the queue
	// does not respond to the cuts), which the competitive-mode test would
	// rightly read as a queue that is not ours.
	c := newCoopT(t, Params{Coop: CoopParams{DisableSwitchOff: true}})
	base := 256 * time.Millisecond
	prev := uint32(math.MaxUint32)
	for i, ratio := range []float64{2, 2.5, 3, 4, 6, 8, 12} {
		q := time.Duration((ratio - 1) * float64(base))
		d := c.Decide(View{Now: t0.Add(time.Duration(i) * 500 * time.Millisecond),
			Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: 1e6}},
			Peers: []PeerView{inflatedPeer(base, q, 1e6)}})
		hi := d.PerDst[dstA].Hi
		// Strictly smaller while the gain (ρ*/ratio)^0.5 is above its 0.5
		// clamp (ratio < 5); beyond, each step halves at most and the
		// estimate stays at half the measured throughput (no undershoot).
		if i > 0 && (hi > prev || ratio < 5 && hi == prev) {
			t.Fatalf("ratio %.1f: hi %d after %d (%q)", ratio, hi, prev, d.Reason)
		}
		if d.PerDst[dstA].Lo != 0 {
			t.Fatalf("ratio %.1f (inflated): lo %d, want 0", ratio, d.PerDst[dstA].Lo)
		}
		prev = hi
	}
	// 0.5e6 × (0.256 + (ρ*−1)·0.256) / 1448: 102 at the default ρ* 1.15.
	if want := uint32(math.Round(0.5e6 * 0.256 * CoopParams{}.Defaults().TargetRatio / 1448)); prev != want {
		t.Fatalf("final hi %d, want %d (half the measured 2e6 B/s shared by 2, at the target)", prev, want)
	}
	// When the throughput itself falls while inflated, the bound follows it down.
	q := 11 * base
	d := c.Decide(View{Now: t0.Add(10 * time.Second),
		Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: 0.2e6}},
		Peers: []PeerView{inflatedPeer(base, q, 0.2e6)}})
	if hi := d.PerDst[dstA].Hi; hi >= prev {
		t.Fatalf("throughput fell to 0.4e6: hi %d, not below %d", hi, prev)
	}
}

// A queue that sticks far above the target at any moment after the group
// drained its own is judged within 1–3 s, also where it jumps while the
// test is closed (the end of the group's held queue probe below the
// delayed-ACK pair, 10–14.5 s here: track resumes from the queue as it is).
// The queue the episode had followed before (5 ms) proved nothing about
// the 250 ms after the jump; kept as owned, it left the group bounded for
// 30 s and more when the jump came at 15–16 s.
func TestCoopJudgesAQueueThatJumpedWhileTheTestWasClosed(t *testing.T) {
	for stuck := 12.0; stuck <= 20; stuck += 0.5 {
		at := inflatedAt(newCoopT(t, Params{}), 50*time.Millisecond)
		r := 40.0
		for s := 0.0; s < stuck; s += 0.5 {
			at(s, r)
			r = max(r*0.85, 1.1)
		}
		offAt := -1.0
		for s := stuck; s < stuck+30; s += 0.5 {
			if d := at(s, 6); d.PerDst[dstA].Hi == 0 {
				offAt = s
				break
			}
		}
		if offAt < stuck+1 || offAt > stuck+3 {
			t.Errorf("queue stuck at 6 × base from t=%.1f: competitive mode at t=%.1f, want 1–3 s later", stuck, offAt)
		}
	}
}

// inflatedAt returns what c decides s seconds after t0 with this terminal
// and one peer at an RTT of ratio × base, delivering 1 MB/s each.
func inflatedAt(c *coop, base time.Duration) func(s, ratio float64) Decision {
	return func(s, ratio float64) Decision {
		q := time.Duration((ratio - 1) * float64(base))
		return c.Decide(View{Now: t0.Add(time.Duration(s * float64(time.Second))),
			Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: 1e6}},
			Peers: []PeerView{inflatedPeer(base, q, 1e6)}})
	}
}

func TestCoopSwitchesOffWhenItCannotDrainTheQueue(t *testing.T) {
	c := newCoopT(t, Params{})
	at := inflatedAt(c, 50*time.Millisecond)
	// A queue that drains as coop cuts (ratio falling 15 % per step) is ours:
	// never off.
	r := 40.0
	for s := 0.0; s < 15; s += 0.5 {
		if d := at(s, r); d.PerDst[dstA].Hi == 0 {
			t.Fatalf("t=%.1f draining ratio %.1f: switched off: %q", s, r, d.Reason)
		}
		r = max(r*0.85, 1.1) // drains to below the target (ρ* 1.15)
	}
	// A queue stuck at ratio 6 from t = 15 s although coop keeps cutting:
	// competitive mode once the cut reached a third and two RTTs passed
	// (OffAfter 1 s dominates at 50 ms), well before the old 10 s.
	offAt := -1.0
	for s := 15.0; s < 20; s += 0.5 {
		if d := at(s, 6); d.PerDst[dstA].Hi == 0 {
			if !strings.Contains(d.Reason, "competing") {
				t.Fatalf("t=%.1f: off without saying why: %q", s, d.Reason)
			}
			offAt = s
			break
		}
	}
	if offAt < 16 || offAt > 18 {
		t.Fatalf("competitive mode at t=%.1f, want 1–3 s after the queue stuck at t=15", offAt)
	}
	if d := at(offAt+20, 1.1); d.PerDst[dstA].Hi != 0 || !strings.Contains(d.Reason, "competing") {
		t.Fatalf("back on during the 30 s off period: %q", d.Reason)
	}
	// After 30 s it starts afresh: inflated → capacity measured → bounded.
	retry := offAt + 30.5
	if d := at(retry, 6); !d.Active || d.PerDst[dstA].Hi == 0 {
		t.Fatalf("t=%.1f: not restarted: %q", retry, d.Reason)
	}
	// Still inelastic right after the retry: off again, for twice as long.
	off2 := -1.0
	for s := retry + 0.5; s < retry+6; s += 0.5 {
		if d := at(s, 6); d.PerDst[dstA].Hi == 0 {
			off2 = s
			break
		}
	}
	if off2 < 0 {
		t.Fatal("inelastic queue after the retry: never off again")
	}
	if d := at(off2+45, 6); d.PerDst[dstA].Hi != 0 || !strings.Contains(d.Reason, "competing") {
		t.Fatalf("second off period shorter than 60 s: %q", d.Reason)
	}
	if d := at(off2+60.5, 6); d.PerDst[dstA].Hi == 0 {
		t.Fatalf("not retried after the 60 s second off period: %q", d.Reason)
	}
	// Disabled: never off.
	at = inflatedAt(newCoopT(t, Params{Coop: CoopParams{DisableSwitchOff: true}}), 50*time.Millisecond)
	for s := 0.0; s < 60; s += 0.5 {
		if d := at(s, 6); d.PerDst[dstA].Hi == 0 {
			t.Fatalf("switch-off disabled but off at t=%.1f", s)
		}
	}
}

func TestCoopLowerBoundOnlyWhenNotInflated(t *testing.T) {
	c := newCoopT(t, Params{})
	base := 256 * time.Millisecond
	step := func(i int, ratio float64) Bounds {
		q := time.Duration((ratio - 1) * float64(base))
		d := c.Decide(View{Now: t0.Add(time.Duration(i) * 500 * time.Millisecond),
			Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: 1e6}},
			Peers: []PeerView{inflatedPeer(base, q, 1e6)}})
		return d.PerDst[dstA]
	}
	if b := step(0, 3); b.Lo != 0 || b.Hi == 0 {
		t.Fatalf("inflated: %+v, want lo 0 and an upper bound", b)
	}
	b := step(1, 1.05)
	if b.Lo == 0 || b.Lo > b.Hi || b.Lo != b.Hi/2 {
		t.Fatalf("not inflated: %+v, want lo = hi/2 > 0", b)
	}
	if b := step(2, CoopParams{}.Defaults().TargetRatio+0.01); b.Lo != 0 {
		t.Fatalf("just above the target ratio: lo %d, want 0", b.Lo)
	}
}

func TestCoopNoPeersIsAGroupOfOne(t *testing.T) {
	c := newCoopT(t, Params{})
	base := 20 * time.Millisecond
	// Not inflated, capacity not measured: a lower bound only (half the BDP
	// at the remembered rate), as before any inflation.
	d := c.Decide(View{Now: t0, Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base, MinRTT: base, DeliveryRate: 5e6}}})
	b := d.PerDst[dstA]
	if !d.Active || b.Hi != 0 || b.Lo != 34 { // 0.5 × 5e6 × 0.02 / 1448 = 34.5
		t.Fatalf("no peers, not inflated: %+v, want {34 0}; %q", d, d.Reason)
	}
	// After a loss the rate collapses; the remembered rate keeps the floor.
	d = c.Decide(View{Now: t0.Add(500 * time.Millisecond), Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base, MinRTT: base, DeliveryRate: 0.1e6}}})
	if got := d.PerDst[dstA].Lo; got < 30 {
		t.Fatalf("floor after a rate collapse: %d, want about 31", got)
	}
	// Inflated alone: the terminal's own queue is bounded (first the probe at
	// today's queue, then the law brings the window down). The inputs are
	// not a closed loop (the queue ignores the bounds), so the elasticity
	// test is off here: it would rightly call such a queue someone else's.
	c = newCoopT(t, Params{Coop: CoopParams{DisableSwitchOff: true}})
	var hi uint32
	for i := 2; i < 12; i++ {
		d = c.Decide(View{Now: t0.Add(time.Duration(i) * 500 * time.Millisecond), Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: 10 * base, MinRTT: base, DeliveryRate: 5e6}}})
		if !d.Active || d.PerDst[dstA].Hi == 0 {
			t.Fatalf("tick %d, no peers, inflated: no upper bound: %+v", i, d)
		}
		if i > 2 && d.PerDst[dstA].Hi > hi {
			t.Fatalf("tick %d: hi rose to %d from %d while the queue stayed 9× base", i, d.PerDst[dstA].Hi, hi)
		}
		hi = d.PerDst[dstA].Hi
	}
	// Disabled solo floor: nothing before the first inflation.
	c2 := newCoopT(t, Params{Coop: CoopParams{DisableSoloFloor: true}})
	if d := c2.Decide(View{Now: t0, Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base, MinRTT: base, DeliveryRate: 5e6}}}); d.Active {
		t.Fatalf("solo floor disabled: active %+v", d)
	}
}

func TestCoopNoUpperBoundBeforeCapacityIsMeasured(t *testing.T) {
	c := newCoopT(t, Params{})
	base := 256 * time.Millisecond
	d := c.Decide(View{Now: t0,
		Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base, MinRTT: base, DeliveryRate: 100e3}},
		Peers: []PeerView{inflatedPeer(base, 0, 100e3)}})
	if d.PerDst[dstA].Hi != 0 {
		t.Fatalf("uncongested start: hi %d, want none; %q", d.PerDst[dstA].Hi, d.Reason)
	}
}

func TestCoopWeightByCapability(t *testing.T) {
	base, q := 50*time.Millisecond, time.Second
	c := newCoopT(t, Params{Coop: CoopParams{WeightByCapability: true, Capability: 3e6}})
	p := inflatedPeer(base, q, 2e6)
	p.Capability = 1e6
	c.Decide(View{Now: t0, Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: 2e6}}, Peers: []PeerView{p}})
	if got := c.targets[dstA]; math.Abs(got-3e6) > 1 {
		t.Fatalf("capability-weighted share %v, want 3/4 of 4e6", got)
	}
}

// Airtime weights: a 433 Mbit/s terminal beside a 65 Mbit/s one gets
// 433/498 of the capacity; with a rate unknown the shares stay equal.
func TestCoopWeightByLinkRate(t *testing.T) {
	base, q := 4*time.Millisecond, 20*time.Millisecond
	share := func(self, peer float64) float64 {
		c := newCoopT(t, Params{Coop: CoopParams{WeightByLinkRate: true}})
		p := inflatedPeer(base, q, 2e6)
		p.LinkRate = peer
		c.Decide(View{Now: t0, LinkRate: self, Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: 2e6}}, Peers: []PeerView{p}})
		return c.targets[dstA]
	}
	if got, want := share(433, 65), 4e6*433/498; math.Abs(got-want) > 1 {
		t.Errorf("433 Mbit/s beside 65: share %v, want %v", got, want)
	}
	if got, want := share(65, 433), 4e6*65/498; math.Abs(got-want) > 1 {
		t.Errorf("65 Mbit/s beside 433: share %v, want %v", got, want)
	}
	if got := share(433, 0); math.Abs(got-2e6) > 1 {
		t.Errorf("peer's rate unknown: share %v, want half of 4e6", got)
	}
}

// Per-access weights: DCF with aggregation gives every station the same
// share of the accesses, and an access carries AccessFrames frames or what
// the rate fits into 5.484 ms: 64 at 150 and 433 Mbit/s (equal shares),
// 5.484 ms × 65 Mbit/s / 12,000 bits = 29.7 at 65 Mbit/s; with 256 frames
// (802.11ax) 433 Mbit/s fits 197.9. A rate unknown leaves the shares equal.
func TestCoopWeightByAccess(t *testing.T) {
	base, q := 4*time.Millisecond, 20*time.Millisecond
	share := func(cp CoopParams, self, peer float64) float64 {
		c := newCoopT(t, Params{Coop: cp})
		p := inflatedPeer(base, q, 2e6)
		p.LinkRate = peer
		c.Decide(View{Now: t0, LinkRate: self, Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: 2e6}}, Peers: []PeerView{p}})
		return c.targets[dstA]
	}
	const slow = 5.484e-3 * 65e6 / 12000 // 29.7 frames at 65 Mbit/s
	on := CoopParams{WeightByAccess: true}
	for _, tc := range []struct {
		name       string
		cp         CoopParams
		self, peer float64
		want       float64
	}{
		{"433 beside 65", on, 433, 65, 4e6 * 64 / (64 + slow)},
		{"65 beside 433", on, 65, 433, 4e6 * slow / (64 + slow)},
		{"433 beside 150: both send 64 frames", on, 433, 150, 2e6},
		{"802.11ax window, 433 beside 150", CoopParams{WeightByAccess: true, AccessFrames: 256}, 433, 150, 4e6 * 197.9 / (197.9 + 68.55)},
		{"peer's rate unknown", on, 433, 0, 2e6},
		{"no aggregation (802.11g): one frame per access", CoopParams{WeightByAccess: true, AccessFrames: 1}, 54, 11, 2e6},
		{"capabilities take precedence", CoopParams{WeightByAccess: true, WeightByCapability: true}, 433, 65, 2e6},
	} {
		if got := share(tc.cp, tc.self, tc.peer); math.Abs(got-tc.want) > 0.001*tc.want {
			t.Errorf("%s: share %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, cp := range []CoopParams{{WeightByAccess: true, WeightByLinkRate: true}, {AccessFrames: 1025}} {
		if err := cp.Validate(); err == nil {
			t.Errorf("%+v accepted", cp)
		}
	}
}

// TestCoopConvergesInFluidModel closes the loop: n terminals with different
// base RTTs share a bottleneck of capacity c0 (fluid model: the queueing delay
// d solves Σ Wᵢ/(Rᵢ + d) = c0 when the windows exceed the path), each runs
// coop on what the others report, and an unbounded window grows 1.5× per step
// like a loss-based sender filling the queue. The loop must settle with the
// RTT near the target, the capacity used and the rates equal.
func TestCoopConvergesInFluidModel(t *testing.T) {
	for _, lag := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("lag%d", lag), func(t *testing.T) { fluidRun(t, lag) })
	}
}

// fluidRun runs the closed loop with the terminals seeing the path lag steps
// (0.5 s each) late.
func fluidRun(t *testing.T, lag int) {
	const c0 = 3e6 // bytes/s, ≈ 24 Mbit/s
	const mss = 1448.0
	bases := []time.Duration{4 * time.Millisecond, 256 * time.Millisecond, 256 * time.Millisecond, 64 * time.Millisecond, 128 * time.Millisecond}
	n := len(bases)
	pols := make([]*coop, n)
	w := make([]float64, n) // windows, segments
	for i := range pols {
		pols[i] = newCoopT(t, Params{})
		w[i] = 10
	}
	var x []float64
	var d float64
	var lastCap []float64
	type obs struct {
		x []float64
		d float64
	}
	var hist []obs
	var capTrace []float64
	for step := 0; step < 80; step++ {
		x, d = fluid(w, bases, c0, mss)
		hist = append(hist, obs{x, d})
		if len(hist) > lag {
			o := hist[len(hist)-1-lag]
			x, d = o.x, o.d
		}
		now := t0.Add(time.Duration(step) * 500 * time.Millisecond)
		caps := make([]float64, n)
		for i := range pols {
			var ps []PeerView
			for j := range pols {
				if j != i {
					ps = append(ps, PeerView{ActiveFlows: 1, SRTT: bases[j] + secs(d), MinRTT: bases[j], DeliveryRate: x[j]})
				}
			}
			dec := pols[i].Decide(View{Now: now, Flows: []FlowView{{Dst: dstA, MSS: mss, SRTT: bases[i] + secs(d), MinRTT: bases[i], DeliveryRate: x[i]}}, Peers: ps})
			hi := float64(dec.PerDst[dstA].Hi)
			if hi == 0 {
				w[i] *= 1.5
			} else {
				w[i] = hi // a bulk sender sits at its cap
			}
			caps[i] = pols[i].capacity
		}
		lastCap = caps
		capTrace = append(capTrace, caps[0])
	}
	// No oscillation at the end: the last 20 estimates stay within 2 %.
	lo, hi := math.Inf(1), 0.0
	for _, v := range capTrace[len(capTrace)-20:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi > 1.02*lo {
		t.Errorf("capacity estimate still moving in the last 10 s: %.0f … %.0f", lo, hi)
	}
	x, d = fluid(w, bases, c0, mss)
	var sum float64
	for _, xi := range x {
		sum += xi
	}
	jain, err := fairness.Jain(x)
	if err != nil {
		t.Fatal(err)
	}
	var rbar float64
	for _, b := range bases {
		rbar += b.Seconds()
	}
	rbar /= float64(n)
	ratio := (rbar + d) / rbar
	t.Logf("rates %v B/s, sum %.0f, jain %.4f, queue %.1f ms, ratio %.3f, capacity estimates %v", x, sum, jain, d*1e3, ratio, lastCap)
	if sum < 0.99*c0 {
		t.Errorf("aggregate %.0f B/s below 99 %% of capacity %.0f", sum, c0)
	}
	if jain < 0.98 {
		t.Errorf("Jain index %.4f < 0.98", jain)
	}
	if ratio < 1.1 || ratio > 1.4 {
		t.Errorf("group ratio %.3f outside [1.1, 1.4] (target %.2f)", ratio, CoopParams{}.Defaults().TargetRatio)
	}
	for i, ci := range lastCap {
		if math.Abs(ci-c0)/c0 > 0.05 {
			t.Errorf("terminal %d capacity estimate %.0f, want within 5 %% of %.0f", i, ci, c0)
		}
	}
}

// fluid returns each window's rate and the queueing delay (s) of a shared
// bottleneck of capacity c0 (bytes/s) with per-flow base RTTs.
func fluid(w []float64, bases []time.Duration, c0, mss float64) ([]float64, float64) {
	rate := func(d float64) ([]float64, float64) {
		x := make([]float64, len(w))
		var s float64
		for i := range w {
			x[i] = w[i] * mss / (bases[i].Seconds() + d)
			s += x[i]
		}
		return x, s
	}
	if x, s := rate(0); s <= c0 {
		return x, 0
	}
	lo, hi := 0.0, 1.0
	for _, s := rate(hi); s > c0; _, s = rate(hi) {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if _, s := rate(mid); s > c0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	x, _ := rate(hi)
	return x, hi
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func TestMaxMinShares(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		c    float64
		d, w []float64
		want []float64
	}{
		{10, []float64{inf, inf}, nil, []float64{5, 5}},
		{10, []float64{1, inf, inf}, nil, []float64{1, 4.5, 4.5}},
		{10, []float64{1, 2, 3}, nil, []float64{1, 2, 3}}, // all satisfied, 4 left over
		{10, []float64{inf, inf}, []float64{3, 1}, []float64{7.5, 2.5}},
		{10, []float64{0, math.NaN(), inf}, nil, []float64{0, 0, 10}},
		{0, []float64{inf}, nil, []float64{0}},
		{12, []float64{2, inf, 5, inf}, nil, []float64{2, 5, 0, 5}}, // 2 met; 10 over 3 → 3.33 < 5, so the rest split 10/3
	}
	cases[6].want = []float64{2, 10.0 / 3, 10.0 / 3, 10.0 / 3}
	for i, c := range cases {
		got := MaxMinShares(c.c, c.d, c.w)
		for j := range got {
			if math.Abs(got[j]-c.want[j]) > 1e-9 {
				t.Errorf("case %d: %v, want %v", i, got, c.want)
				break
			}
		}
	}
	_ = netip.Addr{}
}

// TestCoopTinyBDPStaysOn: 20 terminals on a 4 ms path share 3 MB/s; the
// windows sit at 2–3 segments (the BDP share is 0.4 segments, plus the
// QueueSegments allowance) and that alone queues ~15 ms (ratio ≈ 5, above
// 2 × 1.25). The queue is ours, so coop must not switch off.
func TestCoopTinyBDPStaysOn(t *testing.T) {
	const c0, mss, n = 3e6, 1448.0, 20
	bases := make([]time.Duration, n)
	pols := make([]*coop, n)
	w := make([]float64, n)
	for i := range bases {
		bases[i] = 4 * time.Millisecond
		pols[i] = newCoopT(t, Params{})
		w[i] = 10
	}
	var decs []Decision
	var d float64
	for step := 0; step < 120; step++ {
		var x []float64
		x, d = fluid(w, bases, c0, mss)
		decs = decs[:0]
		for i := range pols {
			var ps []PeerView
			for j := range pols {
				if j != i {
					ps = append(ps, PeerView{ActiveFlows: 1, SRTT: bases[j] + secs(d), MinRTT: bases[j], DeliveryRate: x[j]})
				}
			}
			dec := pols[i].Decide(View{Now: t0.Add(time.Duration(step) * 500 * time.Millisecond),
				Flows: []FlowView{{Dst: dstA, MSS: mss, SRTT: bases[i] + secs(d), MinRTT: bases[i], DeliveryRate: x[i]}}, Peers: ps})
			decs = append(decs, dec)
			if hi := dec.PerDst[dstA].Hi; hi == 0 {
				w[i] *= 1.5
			} else {
				w[i] = float64(hi)
			}
		}
	}
	for i, dec := range decs {
		if !dec.Active || dec.PerDst[dstA].Hi > 3 {
			t.Fatalf("terminal %d after 60 s: %+v (queue %.1f ms)", i, dec, d*1e3)
		}
	}
	if ratio := (0.004 + d) / 0.004; ratio < 2.5 {
		t.Fatalf("ratio %.2f: the scenario does not exercise the switch-off threshold", ratio)
	}
}

// loopSim is a closed loop of coop terminals on a shared bottleneck of
// capacity c0 (bytes/s), in the fluid model of fluid(), with a part eps of
// every RTT that is not queueing caused by the windows and is not in min RTT
// either (one 802.11 contention round, airtime of the frame, the receiver's
// delayed ACK: at 4 ms on the 802.11g emulator cwnd 2 gives srtt 5.0 ms
// against min RTT 4.54 ms). Each terminal also has an idle iperf3 control
// connection to the same destination (app-limited, no rate) whose SRTT is a
// stale ratio 1.75 from its setup (452 ms on a 256 ms path in the testbed:
// as a "queue" it made coop see 99 ms where there were 3). Unbounded
// windows grow 1.5× per step (a loss-based sender filling the queue), bounded
// ones sit at their cap.
type loopSim struct {
	bases []time.Duration
	// minRTT is what each terminal's kernel reports as min RTT (nil: the
	// base): a terminal that joined a loaded medium never saw the empty path.
	minRTT []time.Duration
	eps    time.Duration
	c0     float64
	w      []float64
	pols   []*coop
	decs   []Decision
	x      []float64 // rates of the last step, bytes/s
	d      float64   // queueing delay of the last step, s
	// settled is the queueing delay of the last step at which the first
	// terminal was not running a queue probe (the fluid medium's delivery
	// is flat, so every probe is rejected and leaves nothing behind).
	settled float64
	now     time.Time
}

func newLoopSim(t *testing.T, bases []time.Duration, eps time.Duration, c0, w0 float64) *loopSim {
	s := &loopSim{bases: bases, eps: eps, c0: c0, now: t0}
	for range bases {
		s.pols = append(s.pols, newCoopT(t, Params{}))
		s.w = append(s.w, w0)
	}
	return s
}

func (s *loopSim) step() {
	const mss = 1448.0
	eb := make([]time.Duration, len(s.bases))
	for i, b := range s.bases {
		eb[i] = b + s.eps
	}
	s.x, s.d = fluid(s.w, eb, s.c0, mss)
	s.decs = s.decs[:0]
	minRTT := s.bases
	if s.minRTT != nil {
		// A kernel's min RTT is the smallest RTT seen: it falls with the queue.
		for i := range s.minRTT {
			s.minRTT[i] = min(s.minRTT[i], eb[i]+secs(s.d))
		}
		minRTT = s.minRTT
	}
	for i, p := range s.pols {
		var ps []PeerView
		for j := range s.pols {
			if j != i {
				ps = append(ps, PeerView{ActiveFlows: 1, SRTT: eb[j] + secs(s.d), MinRTT: minRTT[j], DeliveryRate: s.x[j]})
			}
		}
		dec := p.Decide(View{Now: s.now, Peers: ps, Flows: []FlowView{
			{Dst: dstA, MSS: mss, Cwnd: uint32(s.w[i]), SRTT: eb[i] + secs(s.d), MinRTT: minRTT[i], DeliveryRate: s.x[i]},
			{Dst: dstA, MSS: mss, Cwnd: 10, SRTT: minRTT[i]*7/4 + time.Millisecond, MinRTT: minRTT[i], AppLimited: true},
		}})
		s.decs = append(s.decs, dec)
		if hi := dec.PerDst[dstA].Hi; hi == 0 {
			s.w[i] *= 1.5
		} else {
			s.w[i] = float64(hi)
		}
	}
	if p := s.pols[0]; p.probe.current(p.p.Coop) == p.probe.learned(p.p.Coop) {
		s.settled = s.d
	}
	s.now = s.now.Add(500 * time.Millisecond)
}

// TestCoopTestbed4msDoesNotStickAtTheFloor reproduces `coopcc lab run tiny`
// (2 terminals, 802.11g, 4 ms): cubic first fills the station queues (ratio
// ≈ 8), coop cuts, and with a target queue of (ρ*−1)·4.5 ms ≈ 1.1 ms, windows
// rounded down and the non-queueing part of the RTT it used to stay at hi 2
// (10.9 Mbit/s of 24). It must get back to the capacity with a small queue.
func TestCoopTestbed4msDoesNotStickAtTheFloor(t *testing.T) {
	for _, tc := range []struct {
		n   int
		eps time.Duration
	}{{2, 460 * time.Microsecond}, {2, 2 * time.Millisecond}, {5, time.Millisecond}, {10, time.Millisecond}} {
		t.Run(fmt.Sprintf("n%d_eps%v", tc.n, tc.eps), func(t *testing.T) {
			const c0 = 3e6
			bases := make([]time.Duration, tc.n)
			for i := range bases {
				bases[i] = 4540 * time.Microsecond
			}
			s := newLoopSim(t, bases, tc.eps, c0, 10)
			var minSum float64 = math.Inf(1)
			for step := 0; step < 40; step++ {
				s.step()
				if step >= 20 {
					var sum float64
					for _, x := range s.x {
						sum += x
					}
					minSum = min(minSum, sum)
				}
			}
			jain, _ := fairness.Jain(s.x)
			his := make([]uint32, len(s.decs))
			for i, d := range s.decs {
				his[i] = d.PerDst[dstA].Hi
			}
			t.Logf("last 10 s: min aggregate %.0f B/s, queue %.2f ms, jain %.4f, hi %v; %s", minSum, s.d*1e3, jain, his, s.decs[0].Reason)
			if minSum < 0.95*c0 {
				t.Errorf("aggregate fell to %.0f B/s in the last 10 s, want >= 95 %% of %.0f", minSum, c0)
			}
			if jain < 0.98 {
				t.Errorf("Jain %.4f < 0.98", jain)
			}
			// The queue: at most the target plus one window step per terminal.
			if lim := 0.25*0.00454 + float64(3*tc.n)*1448/c0; s.settled > lim {
				t.Errorf("queue %.2f ms, want <= %.2f ms", s.settled*1e3, lim*1e3)
			}
		})
	}
}

// TestCoopLatecomersMinRTT reproduces the lab's 10 terminals at 4 ms
// (2026-11-23): terminals whose connections opened while the medium was
// already loaded report min RTTs of 18–83 ms on a 4.5 ms path (they never saw
// it empty). With those taken as their base, their windows were sized for
// tens of milliseconds, they took more than their share, the queue could not
// drain to the target and the group switched itself off (Jain 0.54–0.77,
// p95 0.7–1.8 s). The group's shared queue tells a latecomer its true base.
func TestCoopLatecomersMinRTT(t *testing.T) {
	const c0, n = 3e6, 10
	bases := make([]time.Duration, n)
	for i := range bases {
		bases[i] = 4540 * time.Microsecond
	}
	s := newLoopSim(t, bases, time.Millisecond, c0, 10)
	s.minRTT = append([]time.Duration(nil), bases...)
	s.minRTT[0], s.minRTT[3], s.minRTT[7] = 50*time.Millisecond, 65*time.Millisecond, 83*time.Millisecond
	s.minRTT[5] = 18 * time.Millisecond
	competing := 0
	var minSum = math.Inf(1)
	for step := 0; step < 60; step++ {
		s.step()
		for _, d := range s.decs {
			if strings.Contains(d.Reason, "competing") {
				competing++
			}
		}
		if step >= 40 {
			var sum float64
			for _, x := range s.x {
				sum += x
			}
			minSum = min(minSum, sum)
		}
	}
	jain, _ := fairness.Jain(s.x)
	t.Logf("last 10 s: min aggregate %.0f B/s, queue %.2f ms, jain %.4f, competing %d; %s", minSum, s.d*1e3, jain, competing, s.decs[0].Reason)
	if competing > 0 {
		t.Errorf("%d decisions in competitive mode: every terminal cooperates", competing)
	}
	if jain < 0.98 {
		t.Errorf("Jain %.4f < 0.98 (rates %v)", jain, s.x)
	}
	if minSum < 0.95*c0 {
		t.Errorf("aggregate fell to %.0f B/s, want >= 95 %% of %.0f", minSum, c0)
	}
	if lim := 0.025; s.settled > lim {
		t.Errorf("queue %.1f ms, want <= %.0f ms", s.settled*1e3, lim*1e3)
	}
}

// TestCoopRecoversFromALowFirstEstimate: 10 terminals at 256 ms. In the
// testbed the first inflation came during slow start (bursts of the doubling
// windows queue at the stations while the delivery rate still reflects
// cwnd 10–20): C started at 0.1 MB/s of 3 MB/s. Rounding down and a growth of
// ×1.12 per tick then kept hi at 2 for the whole 45 s run. The estimate must
// reach the capacity within a few seconds.
func TestCoopRecoversFromALowFirstEstimate(t *testing.T) {
	const c0, n = 3e6, 10
	base := 256 * time.Millisecond
	bases := make([]time.Duration, n)
	for i := range bases {
		bases[i] = base
	}
	s := newLoopSim(t, bases, 0, c0, 20)
	// The bogus first measurement: ratio 1.88, 30 kB/s per terminal (at
	// 5.6 kB/s the QueueSegments floor of d* already explains the queue).
	q := 224 * time.Millisecond
	for i, p := range s.pols {
		var ps []PeerView
		for j := 0; j < n-1; j++ {
			ps = append(ps, inflatedPeer(base, q, 30e3))
		}
		if d := p.Decide(View{Now: s.now, Peers: ps, Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: 30e3}}}); d.PerDst[dstA].Hi == 0 {
			t.Fatalf("terminal %d: no bound after the first inflation: %q", i, d.Reason)
		}
	}
	s.now = s.now.Add(500 * time.Millisecond)
	reached := -1.0
	for step := 1; step <= 60; step++ {
		s.step()
		var sum float64
		for _, x := range s.x {
			sum += x
		}
		if reached < 0 && sum >= 0.95*c0 {
			reached = float64(step) / 2
		}
	}
	jain, _ := fairness.Jain(s.x)
	var sum float64
	for _, x := range s.x {
		sum += x
	}
	t.Logf("95 %% of capacity after %.1f s; final %.0f B/s, queue %.1f ms, jain %.4f; %s", reached, sum, s.d*1e3, jain, s.decs[0].Reason)
	if reached < 0 || reached > 8 {
		t.Errorf("95 %% of capacity reached after %.1f s (-1 = never), want within 8 s", reached)
	}
	if sum < 0.99*c0 || jain < 0.98 || s.d > 0.25*0.256+0.01 {
		t.Errorf("final: %.0f B/s, Jain %.4f, queue %.1f ms; want >= 99 %% of %.0f, >= 0.98, <= 74 ms", sum, jain, s.d*1e3, c0)
	}
}

// TestCoopFirstEstimateIsWhatTheWindowsCarry replays the start of a lab run
// (coexistence --quick, 2026-11-27: 2 coop terminals beside 2 CUBIC hosts,
// 256 ms). At the group's first inflation both coop terminals were in slow
// start with windows of 160 segments at a 326 ms SRTT — 710 kB/s each — while
// the tick's delivery, acknowledged for data sent a round trip and a doubling
// earlier, said 255 kB/s. An estimate from the delivery set the first bounds
// at 58–71 segments and held them there for 3.5 s while the hosts' windows
// grew to 200–400. The first estimate is what the windows carry.
func TestCoopFirstEstimateIsWhatTheWindowsCarry(t *testing.T) {
	const mss, base = 1448.0, 256 * time.Millisecond
	c := newCoopT(t, Params{})
	ticks := []struct {
		q    float64
		rate float64
		cwnd uint32
	}{{0, 14e3, 10}, {0.003, 87e3, 48}, {0.070, 255e3, 160}}
	var d Decision
	for i, tk := range ticks {
		srtt := base + secs(tk.q)
		d = c.Decide(View{Now: t0.Add(time.Duration(i) * 500 * time.Millisecond),
			Flows: []FlowView{{Dst: dstA, MSS: mss, Cwnd: tk.cwnd, SRTT: srtt, MinRTT: base, DeliveryRate: tk.rate}},
			Peers: []PeerView{{ActiveFlows: 1, SRTT: srtt, MinRTT: base, DeliveryRate: tk.rate, Cwnd: tk.cwnd}}})
	}
	carried := 2 * 160 * mss / (base + 70*time.Millisecond).Seconds()
	if c.capacity < 0.95*carried || c.capacity > 1.05*carried {
		t.Errorf("first estimate %.0f B/s, want what the windows carry, %.0f (the delivery said %.0f); %q", c.capacity, carried, 2*255e3, d.Reason)
	}
	if !strings.Contains(d.Reason, "first estimate: what the windows carry") {
		t.Errorf("the reason does not say where the first estimate came from: %q", d.Reason)
	}
	if hi := d.PerDst[dstA].Hi; hi < 150 {
		t.Errorf("first bounds %+v with a window of 160 at the first inflation: want no cut in the tick it is measured; %q", d.PerDst[dstA], d.Reason)
	}
}

// TestCoopFirstEstimateAtTheGuardIsNotFromTheWindows: a first estimate
// raised to the guard of a segment per terminal per second, over a delivery
// that did not grow as a slow start's, is not what the windows carry, and
// the reason must not say it is.
func TestCoopFirstEstimateAtTheGuardIsNotFromTheWindows(t *testing.T) {
	const mss, base = 1448.0, 256 * time.Millisecond
	c := newCoopT(t, Params{})
	// At 5 kB/s for 10 terminals the target's segment floor is 6.4 s: a
	// queue of 7 s is an inflation (a squeezed group behind hosts' queues).
	q := 7 * time.Second
	var ps []PeerView
	for range 9 {
		ps = append(ps, inflatedPeer(base, q, 500))
	}
	d := c.Decide(View{Now: t0, Peers: ps, Flows: []FlowView{{Dst: dstA, MSS: mss, Cwnd: 10, SRTT: base + q, MinRTT: base, DeliveryRate: 500}}})
	if c.capacity != 10*mss {
		t.Fatalf("first estimate %.0f B/s from a delivery of 5 kB/s for 10 terminals, want the guard %.0f; %q", c.capacity, 10*mss, d.Reason)
	}
	if strings.Contains(d.Reason, "first estimate: what the windows carry") {
		t.Errorf("a first estimate at the guard is credited to the windows: %q", d.Reason)
	}
}

// TestGroupCarried: a window counts at its RTT, never under its terminal's
// delivery nor over SlowStartLag × it; an app-limited terminal, or one whose
// window is unknown, counts with its delivery.
func TestGroupCarried(t *testing.T) {
	const mss = 1000.0
	rtt := 100 * time.Millisecond
	g := group{terms: []terminal{
		{base: 80 * time.Millisecond, queue: 20 * time.Millisecond, rate: 50e3, cwnd: 100}, // 1 MB/s in flight: capped at 4 × 50 kB/s
		{base: rtt, rate: 300e3, cwnd: 20},                                                 // 200 kB/s in flight, delivers more
		{base: rtt, rate: 100e3, cwnd: 30},                                                 // 300 kB/s
		{base: rtt, rate: 40e3, cwnd: 500, appLimited: true},                               // its window is not in use
		{base: rtt, rate: 70e3},                                                            // no window reported
		{rate: 10e3, cwnd: 50},                                                             // no RTT known
	}}
	want := 200e3 + 300e3 + 300e3 + 40e3 + 70e3 + 10e3
	if got := g.carried(mss); math.Abs(got-want) > 1 {
		t.Errorf("carried %.0f B/s, want %.0f", got, want)
	}
	// Only a delivery that still grows as a slow start's lags its windows,
	// and only over an evaluation of a few base round trips.
	g.measured = 570e3
	every := 500 * time.Millisecond
	for _, c := range []struct {
		rbar, last, want float64
	}{{0.1, 0, g.measured}, {0.1, g.measured / 1.2, g.measured}, {0.1, g.measured / 2, want}, {0.004, g.measured / 2, g.measured}} {
		g.rbar = c.rbar
		if got := firstEstimate(g, c.last, mss, every); math.Abs(got-c.want) > 1 {
			t.Errorf("first estimate at a base RTT of %v s after a delivery of %.0f B/s: %.0f, want %.0f", c.rbar, c.last, got, c.want)
		}
	}
}

// TestCoopIgnoresIdleFlowsStaleRTT is the testbed's 2 terminals at 256 ms:
// both data flows at srtt 259 ms, but iperf3's idle control connection keeps
// the srtt of its setup (452.8 ms). It must not count as a queue.
func TestCoopIgnoresIdleFlowsStaleRTT(t *testing.T) {
	c := newCoopT(t, Params{})
	base := 256300 * time.Microsecond
	c.capacity = 1e6 // running
	d := c.Decide(View{Now: t0,
		Flows: []FlowView{
			{Dst: dstA, MSS: 1448, SRTT: base + 3*time.Millisecond, MinRTT: base, DeliveryRate: 0.5e6},
			{Dst: dstA, MSS: 1448, SRTT: 452800 * time.Microsecond, MinRTT: 256700 * time.Microsecond, AppLimited: true},
		},
		Peers: []PeerView{inflatedPeer(base, 3*time.Millisecond, 0.5e6)}})
	if !strings.Contains(d.Reason, "not inflated") || d.PerDst[dstA].Lo == 0 {
		t.Fatalf("stale srtt of an idle flow counted as queue: %q", d.Reason)
	}
	// hayakawa2015/2016 and hirai2013 see the data flow's ratio too.
	gs := groupByDst([]FlowView{
		{Dst: dstA, SRTT: base + 3*time.Millisecond, MinRTT: base},
		{Dst: dstA, SRTT: 452800 * time.Microsecond, MinRTT: 256700 * time.Microsecond, AppLimited: true},
	}, 1448)
	if len(gs) != 1 || gs[0].Ratio > 1.02 || gs[0].MinRTT != base {
		t.Fatalf("group %+v: want the data flow's ratio and the smallest min RTT", gs)
	}
}

// TestCoopBaseIsThePathsMinRTT: in slow start at 4 ms the data connection's
// min RTT is its own queue (15.7 ms in the testbed); the idle control
// connection to the same server saw the empty path (4.5 ms). The queue is
// measured against the path's min RTT, so the first estimate comes a tick
// earlier.
func TestCoopBaseIsThePathsMinRTT(t *testing.T) {
	c := newCoopT(t, Params{})
	d := c.Decide(View{Now: t0,
		Flows: []FlowView{
			{Dst: dstA, MSS: 1448, SRTT: 20 * time.Millisecond, MinRTT: 15700 * time.Microsecond, DeliveryRate: 1.5e6},
			{Dst: dstA, MSS: 1448, SRTT: 9 * time.Millisecond, MinRTT: 4500 * time.Microsecond, AppLimited: true},
		},
		Peers: []PeerView{inflatedPeer(4500*time.Microsecond, 15*time.Millisecond, 1.5e6)}})
	if d.PerDst[dstA].Hi == 0 || !strings.Contains(d.Reason, " inflated") {
		t.Fatalf("queue against the path's min RTT not seen: %q", d.Reason)
	}
}

// TestCoopNoEstimateFromNothing: the testbed's first tick at 256 ms saw an
// inflated ratio (the control connections' setup) with no delivery rate yet;
// that started the estimate at 2 segments per second (hi 5).
func TestCoopNoEstimateFromNothing(t *testing.T) {
	c := newCoopT(t, Params{})
	base := 256 * time.Millisecond
	d := c.Decide(View{Now: t0,
		Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + 100*time.Millisecond, MinRTT: base}},
		Peers: []PeerView{inflatedPeer(base, 100*time.Millisecond, 0)}})
	if d.PerDst[dstA].Hi != 0 || c.capacity != 0 {
		t.Fatalf("estimate started from no measurement: capacity %v, %q", c.capacity, d.Reason)
	}
}

// While the group's queue is at or above the target the bottleneck is busy
// and the group's delivered sum is the capacity: the estimate stays within
// BusyCap of it even when some terminals get less than their share for a
// reason their windows do not control (downloads behind the AP's one share
// of the air). Without the cap it stayed at 1.4 × the sum in the lab and the
// uploaders kept twice the downloaders' rate.
func TestCoopEstimateFollowsWhatABusyGroupDelivers(t *testing.T) {
	c := newCoopT(t, Params{Coop: CoopParams{DisableSwitchOff: true}})
	base := 256 * time.Millisecond
	q := 80 * time.Millisecond // above the 64 ms target: inflated
	const up, down = 340e3, 180e3
	view := func(now time.Time) View {
		v := View{Now: now, Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: up}}}
		for i := 0; i < 4; i++ {
			v.Peers = append(v.Peers, inflatedPeer(base, q, up))
		}
		for i := 0; i < 5; i++ {
			v.Peers = append(v.Peers, inflatedPeer(base, q, down))
		}
		return v
	}
	measured := 5*up + 5*down
	c.Decide(view(t0))
	c.capacity = 1.4 * measured // where the lab's mixed run sat
	for i := 1; i <= 4; i++ {
		c.Decide(view(t0.Add(time.Duration(i) * 500 * time.Millisecond)))
	}
	if c.capacity > 1.1*measured+1 {
		t.Fatalf("capacity %.0f B/s with the group delivering %.0f at an inflated queue: want <= 1.1 × that", c.capacity, measured)
	}
	if share := c.targets[dstA]; share > 1.1*measured/10+1 {
		t.Fatalf("an uploader's share %.0f B/s, want <= 1.1 × the per-terminal delivered %.0f", share, measured/10)
	}
}

// TestCoopWindowsFollowTheEstimateUpWhileIdle replays one terminal alone
// at 256 ms (lab, 2026-11-25): the first inflation (43 ms, the slow start's
// own burst) came at 635 kB/s of a 3 MB/s medium, the estimate clamped the
// window at 131 segments, HyStart ended the slow start there, and CUBIC's
// 5 % a round trip took 8 s to grow into the medium while the queue sat
// empty (18.1 against 20.9 Mbit/s in runs whose first inflation came a tick
// later). While the bottleneck idles the lower bound is the share's window
// without a queue, so the window follows the estimate's ramp.
func TestCoopWindowsFollowTheEstimateUpWhileIdle(t *testing.T) {
	const base, mss = 256 * time.Millisecond, 1448.0
	c := newCoopT(t, Params{})
	ticks := []struct{ q, rate float64 }{{0, 29e3}, {0.008, 173e3}, {0.043, 635e3}, {0.0095, 775e3}, {0.0074, 940e3}}
	var d Decision
	for i, tk := range ticks {
		srtt := base + secs(tk.q)
		d = c.Decide(View{Now: t0.Add(time.Duration(i) * 500 * time.Millisecond),
			Flows: []FlowView{{Dst: dstA, MSS: mss, SRTT: srtt, MinRTT: base, DeliveryRate: tk.rate}}})
	}
	b := d.PerDst[dstA]
	want := toSegments(c.capacity * base.Seconds() / mss) // the share (all of it, alone) at the base RTT
	if b.Hi == 0 || b.Lo < want || b.Lo > b.Hi {
		t.Fatalf("idle queue after a low first estimate: bounds %+v, want lo at least %d (the estimate %.0f B/s without a queue); %q", b, want, c.capacity, d.Reason)
	}
	// With a queue under the target but not idle, the lower bound is the
	// usual LoFraction of the upper one.
	d = c.Decide(View{Now: t0.Add(time.Duration(len(ticks)) * 500 * time.Millisecond),
		Flows: []FlowView{{Dst: dstA, MSS: mss, SRTT: base + secs(0.025), MinRTT: base, DeliveryRate: 1.2e6}}})
	if b := d.PerDst[dstA]; b.Lo != toSegments(c.p.Coop.LoFraction*float64(b.Hi)) {
		t.Errorf("queue 25 ms (target ~38): bounds %+v, want lo = %.1f × hi; %q", b, c.p.Coop.LoFraction, d.Reason)
	}
}

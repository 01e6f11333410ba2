package policy

import (
	"math"
	"net/netip"
	"testing"
	"time"
)

// Tests of coop's phases one by one (coop_phases.go); coop_test.go tests the
// whole evaluation and closes the loop in fluid models.

func TestFormGroupMedianIgnoresOneLocalQueue(t *testing.T) {
	ms := time.Millisecond
	self := terminal{base: 4 * ms, queue: 10 * ms, rate: 1e6}
	peers := []terminal{
		{base: 4 * ms, queue: 12 * ms, rate: 1e6},
		{base: 256 * ms, queue: 11 * ms, rate: 1e6},
		{base: 4 * ms, queue: 900 * ms, rate: 1e6}, // its own local queue
		{rate: 5e5}, // no RTT known yet: rate counts, delay does not
	}
	g, ok := formGroup(self, peers)
	if !ok {
		t.Fatal("formGroup: not ok with known base RTTs")
	}
	if g.peers != 4 || g.n() != 5 {
		t.Errorf("peers %d, n %v: want 4 and 5", g.peers, g.n())
	}
	if g.measured != 4.5e6 {
		t.Errorf("measured %v: want 4.5e6 (every terminal's rate)", g.measured)
	}
	if want := (4 + 4 + 256 + 4) / 4.0 / 1000; math.Abs(g.rbar-want) > 1e-9 {
		t.Errorf("R̄ %v: want %v (mean of the known base RTTs)", g.rbar, want)
	}
	// Median of 10, 12, 11, 900 ms (even count: mean of the middle two).
	if want := 0.0115; math.Abs(g.d-want) > 1e-9 {
		t.Errorf("d %v: want %v (the median ignores the 900 ms local queue)", g.d, want)
	}
	if _, ok := formGroup(terminal{rate: 1}, []terminal{{rate: 1}}); ok {
		t.Error("formGroup: ok with no base RTT known")
	}
}

func TestTargetQueueFloorIsQueueSegmentsPerContender(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const mss = 1448.0
	for _, tc := range []struct {
		rbar, capacity float64
		n              int
		floorBinds     bool
	}{
		{rbar: 0.004, capacity: 3e6, n: 10, floorBinds: true},  // 10.1 ms > 0.6 ms
		{rbar: 0.004, capacity: 3e6, n: 1, floorBinds: true},   // 1.4 ms > 0.6 ms
		{rbar: 0.256, capacity: 3e6, n: 10, floorBinds: false}, // 38 ms > 10.1 ms
	} {
		g := group{terms: make([]terminal, tc.n), rbar: tc.rbar}
		dq := targetQueue(cp, g, mss, tc.capacity, float64(cp.QueueSegments))
		relative := (cp.TargetRatio - 1) * tc.rbar
		if !tc.floorBinds {
			if dq != relative {
				t.Errorf("R̄ %v n %d: d* %v, want the relative target %v", tc.rbar, tc.n, dq, relative)
			}
			continue
		}
		// At the capacity the windows are sized for, the floor is exactly
		// QueueSegments extra segments per terminal and half as many for
		// the AP (one ACK frame per delayed-ACK pair).
		if segs := dq * tc.capacity / mss / (float64(tc.n) + 0.5); math.Abs(segs-float64(cp.QueueSegments)) > 1e-9 {
			t.Errorf("R̄ %v n %d: floor holds %.3f segments per contender, want %d", tc.rbar, tc.n, segs, cp.QueueSegments)
		}
		if dq <= relative {
			t.Errorf("R̄ %v n %d: d* %v not above the relative target %v", tc.rbar, tc.n, dq, relative)
		}
	}
	if dq, want := targetQueue(cp, group{terms: make([]terminal, 3), rbar: 0.004}, mss, 0, float64(cp.QueueSegments)), (cp.TargetRatio-1)*0.004; dq != want {
		t.Errorf("no capacity: d* %v, want the relative target %v alone", dq, want)
	}
}

// Below QueueSegments (a down-probe the medium paid for) the whole target
// shrinks in proportion, on a long path (the relative term) as on a short
// one (the floor); above it only the floor grows.
func TestTargetQueueBelowQueueSegmentsShrinksTheWhole(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const mss = 1448.0
	for _, rbar := range []float64{0.004, 0.256} {
		g := group{terms: make([]terminal, 10), rbar: rbar}
		full := targetQueue(cp, g, mss, 3e6, float64(cp.QueueSegments))
		half := targetQueue(cp, g, mss, 3e6, float64(cp.QueueSegments)/2)
		if math.Abs(half-full/2) > 1e-12 {
			t.Errorf("R̄ %v: d* %v at %d segments, %v at half of them; want half", rbar, full, cp.QueueSegments, half)
		}
	}
	g := group{terms: make([]terminal, 10), rbar: 0.256}
	if got, want := targetQueue(cp, g, mss, 3e6, 2*float64(cp.QueueSegments)), (cp.TargetRatio-1)*0.256; got != want {
		t.Errorf("R̄ 256 ms, 4 segments: d* %v, want the relative target %v (not scaled up)", got, want)
	}
}

// Within half a segment's queueing time of the target (quantum) the estimate
// holds: neither the law's gain nor the lift to a delivery above it moves
// it, so the windows stay at the whole segment nearest the target instead
// of dithering about it. Outside the band both act. (A lone terminal at 4 ms
// in the lab: its window alternated between 12 and 13 every 2–3 s.)
func TestNextCapacityHoldsWithinHalfASegmentOfTheTarget(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const mss, rbar, c = 1448.0, 0.0043, 3e6
	lone := func(d, measured float64) group {
		return group{terms: make([]terminal, 1), rbar: rbar, d: d, measured: measured}
	}
	dStar := targetQueue(cp, lone(0, 0), mss, c, 2) // a lone terminal's floor: 1.45 ms
	band := quantum(mss, c)                         // 0.24 ms
	for _, d := range []float64{dStar - 0.9*band, dStar + 0.9*band} {
		if next, gain := nextCapacity(cp, lone(d, 1.02*c), c, dStar, mss, 0, true); next != c || gain != 1 {
			t.Errorf("queue %.3f ms against a target of %.3f: next %.0f (gain %.4f), want the estimate held at %.0f", d*1e3, dStar*1e3, next, gain, c)
		}
	}
	if next, _ := nextCapacity(cp, lone(dStar+1.5*band, c), c, dStar, mss, 0, true); !(next < c) {
		t.Errorf("a queue 1.5 half-segments above the target: next %.0f, want under %.0f", next, c)
	}
	if next, _ := nextCapacity(cp, lone(dStar-1.5*band, c), c, dStar, mss, 0, true); !(next > c) {
		t.Errorf("a queue 1.5 half-segments under the target: next %.0f, want over %.0f", next, c)
	}
}

func TestNextCapacityStepsOfTheLaw(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const mss, rbar = 1448.0, 0.256
	dStar := (cp.TargetRatio - 1) * rbar
	c0 := 3e6 // what the busy bottleneck delivers
	n := 10
	busy := func(c float64) group {
		// All terminals at C: the queue settles where R̄+d = (R̄+d*)·C/C₀.
		return group{terms: make([]terminal, n), rbar: rbar, d: (rbar+dStar)*c/c0 - rbar, measured: c0}
	}

	// Above the true capacity the log error shrinks by (1−k) per step.
	c := 1.08 * c0 // within BusyCap (1.1): the law alone acts
	next, gain := nextCapacity(cp, busy(c), c, dStar, mss, 0, true)
	if want := math.Log(c/c0) * (1 - cp.Gain); math.Abs(math.Log(next/c0)-want) > 1e-9 {
		t.Errorf("C %.0f: next %.0f (gain %.4f), log error %.4f, want %.4f", c, next, gain, math.Log(next/c0), want)
	}
	// Far above: BusyCap caps the estimate at 1.1 × what is delivered.
	if next, _ := nextCapacity(cp, busy(2*c0), 2*c0, dStar, mss, 0, true); next != cp.BusyCap*c0 {
		t.Errorf("C = 2C₀ while busy: next %.0f, want BusyCap × measured %.0f", next, cp.BusyCap*c0)
	}
	// Idle bottleneck (no queue, and the windows sized for C at the target
	// deliver C·(R̄+d*)/R̄ at R̄): probe at GainMax from what is delivered.
	delivered := 2e6 * (rbar + dStar) / rbar
	idle := group{terms: make([]terminal, n), rbar: rbar, d: 0, measured: delivered}
	next, gain = nextCapacity(cp, idle, 2e6, dStar, mss, 0, true)
	if gain != cp.GainMax || math.Abs(next-delivered*cp.GainMax) > 1e-6 {
		t.Errorf("idle: gain %v next %.0f, want %v and %.0f", gain, next, cp.GainMax, delivered*cp.GainMax)
	}
	// A queue a cut emptied since the evaluation before: its delivery
	// included what the queue held — the law's gain, not GainMax.
	drained := idle
	drained.drained = true
	if _, gain := nextCapacity(cp, drained, 2e6, dStar, mss, 0, true); gain >= cp.GainMax || math.Abs(gain-math.Pow((rbar+dStar)/rbar, cp.Gain)) > 1e-9 {
		t.Errorf("drained by a cut: gain %v, want the law's %v", gain, math.Pow((rbar+dStar)/rbar, cp.Gain))
	}
	// No queue but the delivery at or under the estimate: windows that have
	// not grown into their bounds, not an idle medium — the law's gain.
	lagging := group{terms: make([]terminal, n), rbar: rbar, d: 0, measured: 2e6}
	if _, gain := nextCapacity(cp, lagging, 2e6, dStar, mss, 0, true); gain >= cp.GainMax || math.Abs(gain-math.Pow((rbar+dStar)/rbar, cp.Gain)) > 1e-9 {
		t.Errorf("no queue, delivery at the estimate: gain %v, want the law's %v", gain, math.Pow((rbar+dStar)/rbar, cp.Gain))
	}
	// The elasticity test's hold and the n-segment guard are lower limits.
	if next, _ := nextCapacity(cp, busy(4*c0), 1, dStar, mss, 7e6, true); next != 7e6 {
		t.Errorf("hold 7e6: next %.0f, want 7e6", next)
	}
	if next, _ := nextCapacity(cp, group{terms: make([]terminal, n), rbar: rbar, d: 10}, 1, dStar, mss, 0, true); next != float64(n)*mss {
		t.Errorf("nothing delivered: next %.0f, want n·MSS %.0f", next, float64(n)*mss)
	}
}

func TestTerminalShareCountsSelfAsUnlimited(t *testing.T) {
	cp := CoopParams{}.Defaults()
	terms := []terminal{
		{rate: 1e5, appLimited: true}, // self: a cap, not an allocation
		{rate: 1e5, appLimited: true}, // an app-limited peer: what it uses + 10 %
		{rate: 2e6},
	}
	share := terminalShare(cp, terms, 3e6)
	if want := (3e6 - 1.1e5) / 2; math.Abs(share-want) > 1e-6 {
		t.Errorf("share %.0f, want %.0f", share, want)
	}
	cp.WeightByCapability = true
	terms = []terminal{{capability: 3e6}, {capability: 1e6}, {}} // unknown: the mean (2e6)
	if share, want := terminalShare(cp, terms, 6e6), 6e6*3/6; math.Abs(share-want) > 1e-6 {
		t.Errorf("weighted share %.0f, want %.0f", share, want)
	}
}

func TestFlowBoundsWindowsForEqualRates(t *testing.T) {
	cp := CoopParams{}.Defaults()
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	ms := time.Millisecond
	flows := []FlowView{
		{Dst: a, MSS: 1000, MinRTT: 4 * ms},
		{Dst: b, MSS: 1000, MinRTT: 256 * ms},
		{Dst: b, MSS: 1000, MinRTT: 256 * ms, AppLimited: true, DeliveryRate: 1e4},
	}
	const share, q = 3e5, 0.064
	per, targets := flowBounds(cp, flows, share, group{rbar: 0.1}, q, false, 1448)
	// Two bulk flows split what the app-limited one leaves; its own cap is
	// computed with its demand unlimited (a third each).
	bulk := (share - 1.1e4) / 2
	if math.Abs(targets[a]-bulk) > 1e-6 {
		t.Errorf("target of a %.0f, want %.0f", targets[a], bulk)
	}
	wantHi := func(r, base float64) uint32 { return uint32(math.Round(r * (base + q) / 1000)) }
	if per[a].Hi != wantHi(bulk, 0.004) || per[b].Hi != wantHi(bulk, 0.256) {
		t.Errorf("hi a %d b %d: want %d and %d (same rate at the common target queue)", per[a].Hi, per[b].Hi, wantHi(bulk, 0.004), wantHi(bulk, 0.256))
	}
	if per[a].Lo != per[a].Hi/2 {
		t.Errorf("not inflated: lo %d, want half of hi %d", per[a].Lo, per[a].Hi)
	}
	per, _ = flowBounds(cp, flows, share, group{rbar: 0.1}, q, true, 1448)
	if per[a].Lo != 0 || per[b].Lo != 0 {
		t.Errorf("inflated: lo %d/%d, want 0", per[a].Lo, per[b].Lo)
	}
	per, _ = flowBounds(cp, flows[:1], 1, group{rbar: 0.1}, q, false, 1448)
	if per[a].Hi != cp.HiFloor {
		t.Errorf("tiny share: hi %d, want the floor %d", per[a].Hi, cp.HiFloor)
	}
}

// A destination with downloads gets DownloadRoom × its target window while
// the queue is under the target, the target window itself once it is not;
// a destination this terminal also uploads to in bulk keeps the target
// window (the upload's cwnd is bounded by the same entry), an idle
// connection beside the download does not count.
func TestFlowBoundsDownloadRoom(t *testing.T) {
	cp := CoopParams{}.Defaults()
	dl, both := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	ms := time.Millisecond
	flows := []FlowView{
		{Dst: dl, MSS: 1000, MinRTT: 100 * ms, Download: true},
		{Dst: both, MSS: 1000, MinRTT: 100 * ms, Download: true},
		{Dst: both, MSS: 1000, MinRTT: 100 * ms},
		{Dst: dl, MSS: 1000, MinRTT: 100 * ms, AppLimited: true}, // iperf3's idle control connection
	}
	const share, q = 3e5, 0.05
	tight, _ := flowBounds(cp, flows, share, group{rbar: 0.1}, q, true, 1448)
	want := uint32(math.Round(share / 3 * (0.1 + q) / 1000)) // 15
	if tight[dl].Hi != want || tight[both].Hi != want {
		t.Fatalf("inflated: hi %d / %d, want the target window %d for both", tight[dl].Hi, tight[both].Hi, want)
	}
	cp.DownloadRoom = 2
	loose, _ := flowBounds(cp, flows, share, group{rbar: 0.1}, q, false, 1448)
	if loose[dl].Hi != 2*want || loose[both].Hi != want {
		t.Fatalf("not inflated: hi %d (download only) / %d (upload too), want %d and %d", loose[dl].Hi, loose[both].Hi, 2*want, want)
	}
	cp.DownloadRoom = 1
	if none, _ := flowBounds(cp, flows, share, group{rbar: 0.1}, q, false, 1448); none[dl].Hi != want {
		t.Fatalf("download room 1: hi %d, want %d", none[dl].Hi, want)
	}
	for _, bad := range []float64{0.5, 9, math.NaN()} {
		if err := (CoopParams{DownloadRoom: bad}).Validate(); err == nil {
			t.Errorf("download room %v accepted", bad)
		}
	}
}

func TestLatecomerBase(t *testing.T) {
	ms := time.Millisecond
	floor := 4500 * time.Microsecond
	for _, tc := range []struct {
		base, srtt, d, want time.Duration
	}{
		{base: 50 * ms, srtt: 52 * ms, d: 40 * ms, want: 12 * ms},    // joined under load: SRTT − d
		{base: 50 * ms, srtt: 51 * ms, d: 60 * ms, want: floor},      // never below the group's smallest base
		{base: 5 * ms, srtt: 45 * ms, d: 40 * ms, want: 5 * ms},      // sees the group's queue: unchanged
		{base: 5 * ms, srtt: 26 * ms, d: 40 * ms, want: 5 * ms},      // half of it: unchanged
		{base: 256 * ms, srtt: 260 * ms, d: 0, want: 256 * ms},       // no group queue: nothing to learn
		{base: 256 * ms, srtt: 258 * ms, d: 38 * ms, want: 220 * ms}, // a long path whose queue is under half the group's
	} {
		if got := latecomerBase(tc.base, tc.srtt, tc.d, floor); got != tc.want {
			t.Errorf("base %v srtt %v d %v: %v, want %v", tc.base, tc.srtt, tc.d, got, tc.want)
		}
	}
	// formGroup corrects a latecomer and R̄ with it.
	self := terminal{base: 4500 * time.Microsecond, queue: 40 * ms}
	peers := []terminal{{base: 4500 * time.Microsecond, queue: 40 * ms}, {base: 60 * ms, queue: ms}}
	g, _ := formGroup(self, peers)
	if g.terms[2].base != 21*ms || g.terms[2].queue != 40*ms {
		t.Errorf("latecomer: base %v queue %v, want 21ms (61 − 40) and the group's 40ms", g.terms[2].base, g.terms[2].queue)
	}
	if want := (4.5 + 4.5 + 21) / 3 / 1000; math.Abs(g.rbar-want) > 1e-9 {
		t.Errorf("R̄ %v, want %v", g.rbar, want)
	}
}

// A short queue says the medium is idle only if the windows use their
// bounds: while most terminals' cwnds sit under SlackUse × their bounds (the
// kernel's CUBIC regrowing), the estimate holds instead of probing up.
func TestNextCapacityHoldsWhileWindowsHaveSlack(t *testing.T) {
	cp := CoopParams{}.Defaults()
	terms := make([]terminal, 10)
	for i := range terms {
		terms[i] = terminal{base: 256 * time.Millisecond, rate: 220e3, use: 0.6}
	}
	terms[0].use, terms[1].use, terms[2].use = 1, 1, 0 // 2 of 9 known bind
	g, ok := formGroup(terms[0], terms[1:])
	if !ok || !g.slack {
		t.Fatalf("formGroup: ok %v slack %v, want a group with slack (7 of 9 known under %.1f)", ok, g.slack, SlackUse)
	}
	g.d = 0.003 // a queue far under d*: idle by the queue alone
	next, gain := nextCapacity(cp, g, 2.2e6, 0.038, 1448, 0, true)
	if gain > 1 || next > 2.2e6*(1+1e-9) {
		t.Errorf("with slack: estimate %.0f (gain %.3f), want it held at 2.2e6", next, gain)
	}
	g.slack = false
	if next, _ := nextCapacity(cp, g, 2.2e6, 0.038, 1448, 0, true); next <= 2.2e6 {
		t.Errorf("windows at their bounds, queue short: estimate %.0f, want a probe above 2.2e6", next)
	}
	for i := range terms {
		terms[i].use = 0.95
	}
	if g, _ := formGroup(terms[0], terms[1:]); g.slack {
		t.Errorf("every window at 95 %% of its bound counted as slack")
	}
}

// With nothing delivered (a link out of sight) the estimate is free to rise
// on an empty queue — no delivery caps it — but the first evaluation that
// delivers anything brings it to ProbeCap × that delivery: after an outage
// the windows find bounds within one evaluation. Holding it instead kept a
// download's bound at the 2 segments of the outage's fade (lab, vehicle-2014
// drive, thirty-second session).
func TestNextCapacityAfterNothingIsDeliveredIsCappedByTheFirstDelivery(t *testing.T) {
	cp := CoopParams{}.Defaults()
	g := group{terms: make([]terminal, 1), rbar: 0.004, d: 0.0001}
	dStar := func(c float64) float64 { return targetQueue(cp, g, 1448, c, 2) }
	c := 95e3      // the estimate as the link faded
	for range 40 { // 20 s out of sight
		c, _ = nextCapacity(cp, g, c, dStar(c), 1448, 0, true)
	}
	if c < 10*95e3 {
		t.Fatalf("20 s with nothing delivered: estimate %.0f, want it risen well above the fade's 95 kB/s", c)
	}
	g.measured = 50e3 // the first retransmissions get through
	if next, _ := nextCapacity(cp, g, c, dStar(c), 1448, 0, true); next > cp.ProbeCap*g.measured*(1+1e-9) {
		t.Errorf("first delivery 50 kB/s after the outage: estimate %.0f, want at most %.0f (ProbeCap × the delivery)", next, cp.ProbeCap*g.measured)
	}
}

// windowUse reads the terminal's own cwnds against the bounds it set last.
func TestWindowUse(t *testing.T) {
	last := Decision{Active: true, PerDst: map[netip.Addr]Bounds{dstA: {Hi: 40}}}
	flows := []FlowView{{Dst: dstA, Cwnd: 20}, {Dst: dstA, Cwnd: 40}, {Dst: dstA, Cwnd: 5, AppLimited: true}}
	if u := windowUse(flows, last); u != 0.75 {
		t.Errorf("use %v, want 60/80 = 0.75 (the app-limited flow left out)", u)
	}
	if u := windowUse(flows, Decision{}); u != 0 {
		t.Errorf("no bounds last time: use %v, want 0 (unknown)", u)
	}
}

// A destination's lower bound is its bulk flows': iperf3's idle control
// connection beside the data flow (app-limited, its share computed as if it
// were unlimited: half) must not halve it, in either order.
func TestFlowBoundsLowerBoundIsTheBulkFlows(t *testing.T) {
	cp := CoopParams{}.Defaults()
	data := FlowView{Dst: dstA, MSS: 1448, MinRTT: 100 * time.Millisecond, SRTT: 101 * time.Millisecond, DeliveryRate: 1e6}
	ctrl := FlowView{Dst: dstA, MSS: 1448, MinRTT: 100 * time.Millisecond, SRTT: 101 * time.Millisecond, AppLimited: true}
	g := group{rbar: 0.1, d: 0.001}
	alone, _ := flowBounds(cp, []FlowView{data}, 1e6, g, 0.02, false, 1448)
	for _, flows := range [][]FlowView{{data, ctrl}, {ctrl, data}} {
		per, _ := flowBounds(cp, flows, 1e6, g, 0.02, false, 1448)
		if per[dstA] != alone[dstA] {
			t.Errorf("data flow with an idle control connection (first app-limited: %v): bounds %+v, want the data flow's alone %+v", flows[0].AppLimited, per[dstA], alone[dstA])
		}
	}
	// Only app-limited flows: their lower bound is all there is.
	if per, _ := flowBounds(cp, []FlowView{ctrl}, 1e6, g, 0.02, false, 1448); per[dstA].Lo == 0 {
		t.Errorf("an app-limited destination alone: bounds %+v, want a lower bound", per[dstA])
	}
}

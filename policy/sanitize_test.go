package policy

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/coopcc/coopcc/airtime"
)

// An insider (a holder of the group key) that reports 100 Gbit/s, RTT 0 and
// 65,535 flows must not take over coop's estimates: after SanitizeView and
// ClampDecision the honest terminal's bounds stay in the sane range and
// close to what it gets without the liar (issue: hi rose to tens of
// thousands of segments, lo to 30,000–40,000, which the datapath enforced).
func TestInsiderCannotDriveBoundsOutOfRange(t *testing.T) {
	const base, queue = 256 * time.Millisecond, time.Second // inflated: coop bounds
	honest := func(now time.Time) View {
		v := View{Now: now, Flows: []FlowView{{Dst: dstA, Cwnd: 100, MSS: 1448, SRTT: base + queue, MinRTT: base, DeliveryRate: 312e3}}}
		for k := 0; k < 8; k++ {
			v.Peers = append(v.Peers, inflatedPeer(base, queue, 312e3))
		}
		return v
	}
	liar := PeerView{ActiveFlows: 65535, SRTT: 0, MinRTT: 0, DeliveryRate: 100e9 / 8, Capability: 100e9 / 8}
	run := func(withLiar bool) (last Decision, maxHi, maxLo uint32) {
		c := newCoopT(t, Params{})
		for k := 0; k < 200; k++ { // 100 s at the agent's 0.5 s interval
			v := honest(t0.Add(time.Duration(k) * 500 * time.Millisecond))
			if withLiar {
				v.Peers = append(v.Peers, liar)
			}
			d := ClampDecision(c.Decide(SanitizeView(v)), v, MinHiOf(c))
			for _, b := range append([]Bounds{d.Default}, mapValues(d.PerDst)...) {
				maxHi, maxLo = max(maxHi, b.Hi), max(maxLo, b.Lo)
				if b.Hi != 0 && b.Hi < MinHi {
					t.Fatalf("tick %d: hi %d < %d", k, b.Hi, MinHi)
				}
			}
			last = d
		}
		return last, maxHi, maxLo
	}
	_, hiHonest, loHonest := run(false)
	_, hiAttack, loAttack := run(true)
	if hiHonest == 0 || hiAttack == 0 {
		t.Fatalf("coop set no upper bound (without liar %d, with %d): the test needs an active policy", hiHonest, hiAttack)
	}
	// Own window in flight: 312 kB/s × 1.256 s / 1448 B ≈ 271 segments; lo
	// may be at most 2× + 1, whatever the liar says.
	if loAttack > 2*271+1 {
		t.Errorf("under attack lo reached %d segments, above twice the window in flight", loAttack)
	}
	if hiAttack > 4*max(hiHonest, 1) {
		t.Errorf("under attack hi reached %d, without the liar %d", hiAttack, hiHonest)
	}
	t.Logf("max hi/lo without liar %d/%d, with liar %d/%d", hiHonest, loHonest, hiAttack, loAttack)
}

func mapValues(m map[netip.Addr]Bounds) []Bounds {
	out := make([]Bounds, 0, len(m))
	for _, b := range m {
		out = append(out, b)
	}
	return out
}

// Property: whatever peers report, SanitizeView's peers are within the
// documented limits, and one peer cannot raise the rate ceiling.
func TestSanitizeViewProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	wild := func() float64 {
		switch rng.IntN(5) {
		case 0:
			return math.NaN()
		case 1:
			return -rng.Float64() * 1e9
		case 2:
			return math.Inf(1)
		case 3:
			return rng.Float64() * 1e15
		}
		return rng.Float64() * 5e6
	}
	wildRTT := func() time.Duration { return time.Duration(rng.Int64N(int64(120*time.Second))) - time.Second }
	for i := 0; i < 2000; i++ {
		v := View{Now: t0, Flows: []FlowView{{Dst: dstA, MSS: 1448, DeliveryRate: rng.Float64() * 5e6, MinRTT: 5 * time.Millisecond, SRTT: 6 * time.Millisecond}}, LinkRate: wild(), Air: airtime.Shares{Busy: wild(), Own: wild(), Foreign: wild()}}
		for k := rng.IntN(12); k > 0; k-- {
			v.Peers = append(v.Peers, PeerView{ActiveFlows: rng.IntN(70000) - 5, SRTT: wildRTT(), MinRTT: wildRTT(), DeliveryRate: wild(), Capability: wild(), LinkRate: wild(), Air: airtime.Shares{Busy: wild() - 1e6, Own: wild()}})
		}
		s := SanitizeView(v)
		ceiling := rateCeiling(v)
		if !(s.LinkRate >= 0 && s.LinkRate <= MaxPlausibleLinkRate) {
			t.Fatalf("own link rate %v outside [0, %v]", s.LinkRate, MaxPlausibleLinkRate)
		}
		inUnit := func(a airtime.Shares) bool {
			return a.Busy >= 0 && a.Busy <= 1 && a.Own >= 0 && a.Own <= 1 && a.Foreign >= 0 && a.Foreign <= a.Busy
		}
		if !inUnit(s.Air) {
			t.Fatalf("own airtime %+v outside [0, 1]", s.Air)
		}
		for _, p := range s.Peers {
			switch {
			case !(p.DeliveryRate >= 0 && p.DeliveryRate <= ceiling && p.DeliveryRate <= MaxPlausibleRate):
				t.Fatalf("delivery rate %v outside [0, %v]", p.DeliveryRate, ceiling)
			case !(p.Capability >= 0 && p.Capability <= ceiling):
				t.Fatalf("capability %v outside [0, %v]", p.Capability, ceiling)
			case p.SRTT != 0 && (p.SRTT < MinPlausibleRTT || p.SRTT > MaxPlausibleRTT):
				t.Fatalf("srtt %v", p.SRTT)
			case p.MinRTT != 0 && (p.MinRTT < MinPlausibleRTT || p.MinRTT > MaxPlausibleRTT):
				t.Fatalf("min rtt %v", p.MinRTT)
			case p.SRTT > 0 && p.MinRTT > p.SRTT:
				t.Fatalf("min rtt %v above srtt %v", p.MinRTT, p.SRTT)
			case p.ActiveFlows < 0 || p.ActiveFlows > MaxPlausibleFlows:
				t.Fatalf("flows %d", p.ActiveFlows)
			case !(p.LinkRate >= 0 && p.LinkRate <= MaxPlausibleLinkRate):
				t.Fatalf("link rate %v outside [0, %v]", p.LinkRate, MaxPlausibleLinkRate)
			case !inUnit(p.Air):
				t.Fatalf("airtime %+v outside [0, 1]", p.Air)
			}
		}
		if len(v.Peers) >= 2 {
			// One extra liar moves the ceiling by at most one rank of the median.
			liar := v
			liar.Peers = append(append([]PeerView(nil), v.Peers...), PeerView{DeliveryRate: 1e15})
			honestMax := math.Max(ceiling, maxPeerRate(v)*PlausibleRateFactor)
			if c := rateCeiling(liar); c > math.Min(honestMax, MaxPlausibleRate)+1 {
				t.Fatalf("one liar raised the ceiling from %v to %v", ceiling, c)
			}
		}
	}
}

func maxPeerRate(v View) float64 {
	m := ownRate(v)
	for _, p := range v.Peers {
		if p.DeliveryRate > 0 && !math.IsNaN(p.DeliveryRate) {
			m = math.Max(m, math.Min(p.DeliveryRate, MaxPlausibleRate))
		}
	}
	return m
}

// Property: ClampDecision's bounds keep hi ≥ the floor (0 = none stays),
// lo ≤ hi and lo ≤ the BDP cap; inactive decisions pass unchanged.
func TestClampDecisionProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		v := View{Flows: []FlowView{{Dst: dstA, MSS: 1448, Cwnd: rng.Uint32N(5000), DeliveryRate: rng.Float64() * 1e7, MinRTT: time.Duration(rng.Int64N(int64(time.Second)))}}}
		if rng.IntN(2) == 0 {
			v.PeakRate = rng.Float64() * 1e7
		}
		b := func() Bounds { return Bounds{Lo: rng.Uint32() >> rng.IntN(32), Hi: rng.Uint32() >> rng.IntN(32)} }
		d := Decision{Active: true, Default: b(), PerDst: map[netip.Addr]Bounds{dstA: b(), dstB: b()}}
		floor := uint32(1 + rng.IntN(2))
		out := ClampDecision(d, v, floor)
		// The cap by an independent computation: twice the window at the
		// rate now, or at the peak but then at most twice the cwnd, at the
		// flow's RTT.
		f := v.Flows[0]
		window := func(rate float64) float64 { return 2*math.Ceil(rate*f.MinRTT.Seconds()/float64(f.MSS)) + 1 }
		capF := math.Max(window(f.DeliveryRate), MinLoCap)
		if v.PeakRate > 0 {
			capF = math.Max(capF, math.Min(window(v.PeakRate), 2*float64(f.Cwnd)+1))
		}
		loCap := uint32(capF)
		for _, bb := range append([]Bounds{out.Default}, mapValues(out.PerDst)...) {
			if (bb.Hi != 0 && bb.Hi < floor) || (bb.Hi != 0 && bb.Lo > bb.Hi) || bb.Lo > loCap {
				t.Fatalf("bounds %+v (floor %d, lo cap %d) from %+v", bb, floor, loCap, d)
			}
		}
		if d.PerDst[dstA].Hi == 0 && out.PerDst[dstA].Hi != 0 {
			t.Fatal("no upper bound became one")
		}
	}
	in := Decision{Reason: "off"}
	if out := ClampDecision(in, View{}, MinHi); out.Active || out.Reason != "off" {
		t.Fatalf("inactive decision changed: %+v", out)
	}
}

// A terminal cut by its policy, or whose flow stalled, delivers little now;
// the floor that restores the rate it carried before (coop's competitive
// floor) must get through the clamp. Replayed from the lab (testbed2012,
// papers/000's grid, N = 8, 2026-11-27): a floor of 678 segments, 132.7 kB/s
// at a 7.4 s RTT, was applied as 10 while the flow delivered 0.4 kB/s.
func TestClampDecisionLetsAFloorBackToTheRecentPeak(t *testing.T) {
	stalled := View{Flows: []FlowView{{Dst: dstA, Cwnd: 3, MSS: 1448, SRTT: 7400 * time.Millisecond, MinRTT: 256 * time.Millisecond, DeliveryRate: 400}}}
	floor := Decision{Active: true, PerDst: map[netip.Addr]Bounds{dstA: {Lo: 678}}}
	if got := ClampDecision(floor, stalled, MinHi).PerDst[dstA].Lo; got != MinLoCap {
		t.Fatalf("no peak known: lo %d, want the cap on today's delivery, %d", got, MinLoCap)
	}
	// After a peak of 132.7 kB/s the floor comes back by doublings of the
	// window, one per decision, as the window follows it.
	recent := stalled
	recent.PeakRate = 132656
	var steps []uint32
	for range 10 {
		lo := ClampDecision(floor, recent, MinHi).PerDst[dstA].Lo
		steps = append(steps, lo)
		if lo == 678 {
			break
		}
		recent.Flows[0].Cwnd = lo
	}
	if want := []uint32{10, 21, 43, 87, 175, 351, 678}; !slices.Equal(steps, want) {
		t.Errorf("floor applied in steps %v, want %v", steps, want)
	}
	// Still a cap: twice the peak's window at today's RTT.
	huge := Decision{Active: true, PerDst: map[netip.Addr]Bounds{dstA: {Lo: 100000}}}
	recent.Flows[0].Cwnd = 5000
	if got, want := ClampDecision(huge, recent, MinHi).PerDst[dstA].Lo, uint32(2*678+1); got != want {
		t.Errorf("a floor of 100000: lo %d, want %d", got, want)
	}
}

// RatePeak keeps the largest delivery rate of the flows, halving every
// RatePeakHalfLife; a larger rate replaces it at once.
func TestRatePeak(t *testing.T) {
	var p RatePeak
	at := func(s int, rates ...float64) float64 {
		flows := make([]FlowView, len(rates))
		for i, r := range rates {
			flows[i] = FlowView{DeliveryRate: r}
		}
		return p.Observe(t0.Add(time.Duration(s)*time.Second), flows)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-6*want }
	if got := at(0, 1e5, 3e4); got != 1e5 {
		t.Fatalf("first: %v, want the larger flow's 1e5", got)
	}
	if got := at(60, 0); !near(got, 5e4) {
		t.Errorf("a half-life later with nothing delivered: %v, want 5e4", got)
	}
	if got := at(120, math.Inf(1), math.NaN()); !near(got, 2.5e4) {
		t.Errorf("two half-lives, infinite and NaN rates ignored: %v, want 2.5e4", got)
	}
	if got := at(121, 2e5); got != 2e5 {
		t.Errorf("a larger rate: %v, want 2e5", got)
	}
	if got := at(100, 0); got != 2e5 {
		t.Errorf("a sample from the past: %v, want the peak unchanged", got)
	}
	// A burst of ACKs counts for what the window carries: 10 segments of
	// 1000 B at 10 ms, 1 MB/s, not the 5 MB/s the evaluation saw.
	burst := RatePeak{}
	if got := burst.Observe(t0, []FlowView{{DeliveryRate: 5e6, Cwnd: 10, MSS: 1000, SRTT: 10 * time.Millisecond}}); !near(got, 1e6) {
		t.Errorf("a burst: %v, want the window's 1e6", got)
	}
}

func TestMinHiOf(t *testing.T) {
	for name, want := range map[string]uint32{"coop": MinHi, "hayakawa2016": 1, "hayakawa2015": MinHi} {
		p, err := New(name, Params{})
		if err != nil {
			t.Fatal(err)
		}
		if got := MinHiOf(p); got != want {
			t.Errorf("%s: floor %d, want %d", name, got, want)
		}
	}
}

package policy

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"
)

// checkDecision asserts the invariants every policy's output must satisfy.
func checkDecision(t *testing.T, name string, d Decision, v View) {
	t.Helper()
	if d.Reason == "" {
		t.Fatalf("%s: empty reason for %+v", name, v)
	}
	if !d.Active {
		if d.Default != (Bounds{}) || len(d.PerDst) != 0 {
			t.Fatalf("%s: inactive decision carries bounds %+v", name, d)
		}
		return
	}
	check := func(where string, b Bounds) {
		if b.Hi != 0 && (b.Hi < 1 || b.Lo > b.Hi) {
			t.Fatalf("%s: %s bounds %+v violate lo <= hi, hi >= 1 (view %+v)", name, where, b, v)
		}
	}
	check("default", d.Default)
	for dst, b := range d.PerDst {
		if !dst.IsValid() {
			t.Fatalf("%s: PerDst has an invalid address", name)
		}
		check(dst.String(), b)
	}
}

// randDuration picks from zero, negative, tiny, typical and huge values.
func randDuration(r *rand.Rand) time.Duration {
	switch r.IntN(8) {
	case 0:
		return 0
	case 1:
		return -time.Duration(r.Int64N(1e9))
	case 2:
		return time.Duration(r.Int64N(1000)) // ns
	case 3:
		return time.Duration(math.MaxInt64 - r.Int64N(1000))
	default:
		return time.Duration(r.Int64N(int64(20 * time.Second)))
	}
}

func randRate(r *rand.Rand) float64 {
	switch r.IntN(8) {
	case 0:
		return 0
	case 1:
		return math.NaN()
	case 2:
		return math.Inf(1)
	case 3:
		return -r.Float64() * 1e6
	case 4:
		return math.MaxFloat64 / (1 + r.Float64())
	default:
		return r.Float64() * 1e8
	}
}

func randView(r *rand.Rand, now time.Time) View {
	v := View{Now: now}
	dsts := []netip.Addr{{}, dstA, dstB, netip.MustParseAddr("2001:db8::1")}
	for range r.IntN(5) {
		mss := []uint32{0, 1, 536, 1448, 65535, math.MaxUint32}[r.IntN(6)]
		v.Flows = append(v.Flows, FlowView{
			Dst: dsts[r.IntN(len(dsts))], Cwnd: r.Uint32(), MSS: mss,
			SRTT: randDuration(r), MinRTT: randDuration(r), DeliveryRate: randRate(r), AppLimited: r.IntN(3) == 0,
			Download: r.IntN(4) == 0,
		})
	}
	for range r.IntN(25) {
		v.Peers = append(v.Peers, PeerView{
			ActiveFlows: r.IntN(4) - 1, SRTT: randDuration(r), MinRTT: randDuration(r),
			DeliveryRate: randRate(r), Demand: r.Uint64(), AppLimited: r.IntN(4) == 0,
			Capability: randRate(r), Lo: r.Uint32(), Hi: r.Uint32(),
		})
	}
	return v
}

func TestPropertiesRandomViews(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 2026))
	paramSets := []Params{
		{},
		{StaticLo: 3, StaticHi: 30, BWmax: 54e6, Alpha: 1e4, MSS: 1},
		{BWmax: math.MaxFloat64 / 2, Alpha: math.MaxFloat64 / 4, Coop: CoopParams{WeightByCapability: true, Capability: 1e6}},
	}
	for _, p := range paramSets {
		for _, name := range Names() {
			pol := mustNew(t, name, p)
			now := t0
			for i := 0; i < 3000; i++ {
				// Mostly forward, sometimes backwards or a long jump.
				switch r.IntN(10) {
				case 0:
					now = now.Add(-time.Duration(r.Int64N(int64(time.Second))))
				case 1:
					now = now.Add(time.Hour)
				default:
					now = now.Add(time.Duration(r.Int64N(int64(700 * time.Millisecond))))
				}
				v := randView(r, now)
				checkDecision(t, name, pol.Decide(v), v)
			}
		}
	}
}

func TestPropertiesEmptyAndZeroViews(t *testing.T) {
	views := []View{
		{},
		{Now: t0},
		{Now: t0, Flows: []FlowView{{}}},
		{Now: t0, Flows: []FlowView{{Dst: dstA}}, Peers: []PeerView{{}}},
		{Now: t0, Flows: []FlowView{{Dst: dstA}}, Peers: []PeerView{{ActiveFlows: 1}}},
		{Now: t0, Flows: []FlowView{{Dst: dstA, SRTT: time.Second}}, Peers: []PeerView{{ActiveFlows: 1, SRTT: time.Second}}},
	}
	for _, name := range Names() {
		pol := mustNew(t, name, Params{StaticHi: 10})
		for _, v := range views {
			checkDecision(t, name, pol.Decide(v), v)
		}
	}
}

// hiFor returns the upper bound a fresh policy gives a flow with base RTT
// 256 ms among n terminals sharing capacity c (bytes/s) equally.
func hiFor(t *testing.T, name string, n int, ratio float64, c float64) uint32 {
	t.Helper()
	pol := mustNew(t, name, Params{BWmax: 8 * c})
	base := 256 * time.Millisecond
	srtt := time.Duration(ratio * float64(base))
	mk := func(now time.Time, srtt time.Duration) View {
		v := View{Now: now, Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: srtt, MinRTT: base, DeliveryRate: c / float64(n)}}}
		for range n - 1 {
			v.Peers = append(v.Peers, PeerView{ActiveFlows: 1, SRTT: srtt, MinRTT: base, DeliveryRate: c / float64(n)})
		}
		return v
	}
	if name == "hayakawa2016" {
		pol.Decide(mk(t0, 7*base)) // switch control on
		return pol.Decide(mk(t0.Add(time.Second), srtt)).PerDst[dstA].Hi
	}
	return pol.Decide(mk(t0, srtt)).PerDst[dstA].Hi
}

func TestPropertyBoundsNonIncreasingInN(t *testing.T) {
	for _, name := range []string{"hirai2013", "hayakawa2015", "hayakawa2016", "coop"} {
		for _, ratio := range []float64{1.0, 1.6, 2.5, 4.5} {
			if name == "hayakawa2016" && ratio > 5 {
				continue
			}
			if name == "coop" && ratio < 1.25 {
				continue // no upper bound before the capacity is measured
			}
			prev := uint32(math.MaxUint32)
			first := 1
			if name == "coop" {
				first = 2 // alone, coop sets no upper bound (nothing to share)
			}
			for n := first; n <= 30; n++ {
				hi := hiFor(t, name, n, ratio, 3e6)
				if hi == 0 || hi > prev {
					t.Fatalf("%s ratio %.1f: N=%d hi %d after %d", name, ratio, n, hi, prev)
				}
				prev = hi
			}
		}
	}
}

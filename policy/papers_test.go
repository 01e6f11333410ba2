package policy

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

var (
	t0   = time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	dstA = netip.MustParseAddr("10.77.9.1")
	dstB = netip.MustParseAddr("10.77.9.2")
)

// peers returns k active, network-limited peers.
func peers(k int) []PeerView {
	ps := make([]PeerView, k)
	for i := range ps {
		ps[i] = PeerView{ActiveFlows: 1, SRTT: 300 * time.Millisecond, MinRTT: 256 * time.Millisecond, DeliveryRate: 250e3}
	}
	return ps
}

// view has one flow to dstA with the given RTTs and n−1 active peers.
func view(now time.Time, n int, srtt, minRTT time.Duration) View {
	return View{Now: now, Flows: []FlowView{{Dst: dstA, Cwnd: 10, MSS: 1448, SRTT: srtt, MinRTT: minRTT, DeliveryRate: 250e3}}, Peers: peers(n - 1)}
}

func mustNew(t *testing.T, name string, p Params) Policy {
	t.Helper()
	pol, err := New(name, p)
	if err != nil {
		t.Fatal(err)
	}
	if pol.Name() != name {
		t.Fatalf("Name() = %q, want %q", pol.Name(), name)
	}
	return pol
}

func TestNewUnknownNameListsKnown(t *testing.T) {
	_, err := New("cubic", Params{})
	if err == nil {
		t.Fatal("New(cubic) succeeded")
	}
	for _, n := range Names() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list %q", err, n)
		}
	}
	if _, err := New("static", Params{StaticLo: 5, StaticHi: 3}); err == nil {
		t.Error("static lo > hi accepted")
	}
	if _, err := New("coop", Params{Coop: CoopParams{TargetRatio: 0.9}}); err == nil {
		t.Error("coop target ratio 0.9 accepted")
	}
}

func TestActiveTerminals(t *testing.T) {
	ps := []PeerView{
		{ActiveFlows: 1},
		{ActiveFlows: 0},                   // idle
		{ActiveFlows: 2, AppLimited: true}, // app-limited: does not compete
		{ActiveFlows: 3},
	}
	if got := ActiveTerminals(ps); got != 3 {
		t.Fatalf("N = %d, want 3 (self + 2 network-limited peers)", got)
	}
	if got := ActiveTerminals(nil); got != 1 {
		t.Fatalf("N with no peers = %d, want 1", got)
	}
}

func TestStatic(t *testing.T) {
	d := mustNew(t, "static", Params{StaticLo: 4, StaticHi: 40}).Decide(View{Now: t0})
	if !d.Active || d.Default != (Bounds{Lo: 4, Hi: 40}) || len(d.PerDst) != 0 {
		t.Fatalf("static = %+v", d)
	}
	if d := mustNew(t, "static", Params{}).Decide(View{Now: t0}); d.Active {
		t.Fatalf("static without bounds is active: %+v", d)
	}
}

func TestHayakawa2015Tables(t *testing.T) {
	cases := []struct {
		name     string
		n        int
		srtt     time.Duration
		minRTT   time.Duration
		want     Bounds
		wantText string
	}{
		// Issue 5: N = 10, min RTT 256 ms (phase B), not inflated → Table 2 row 10: max 17, min 5.
		{"B N10 ratio1", 10, 256 * time.Millisecond, 256 * time.Millisecond, Bounds{Lo: 5, Hi: 17}, "phase B"},
		// ratio_rtt 3.5 in phase B → Table 3 "3.0 ~": max 100, min 20; with N = 1 (555/250) the table-3 row is smaller.
		{"B N1 ratio3.5", 1, 896 * time.Millisecond, 256 * time.Millisecond, Bounds{Lo: 20, Hi: 100}, "table3 100/20"},
		// Smaller of two, mixed: N = 5 B → 65/40; ratio 2.5 B → 300/100 → max 65 (table 2), min 40 (table 2).
		{"B N5 ratio2.5", 5, 640 * time.Millisecond, 256 * time.Millisecond, Bounds{Lo: 40, Hi: 65}, ""},
		// Mixed sources: N = 4 B → 200/120; ratio 3.5 → 100/20 → max 100 from table 3, min 20 from table 3.
		{"B N4 ratio3.5", 4, 896 * time.Millisecond, 256 * time.Millisecond, Bounds{Lo: 20, Hi: 100}, ""},
		// Max from one table and min from the other: N = 8 B → 28/15; ratio 4.5 → 10/5 → max 10, min 5.
		{"B N8 ratio4.5", 8, 1152 * time.Millisecond, 256 * time.Millisecond, Bounds{Lo: 5, Hi: 10}, ""},
		// N = 3 B → 300/200; ratio 2.0 → 300/100: max 300 (equal), min 100 (table 3).
		{"B N3 ratio2", 3, 512 * time.Millisecond, 256 * time.Millisecond, Bounds{Lo: 100, Hi: 300}, ""},
		// ratio ≥ 10 in phase B → last row 2/1.
		{"B N2 ratio12", 2, 3072 * time.Millisecond, 256 * time.Millisecond, Bounds{Lo: 1, Hi: 2}, ""},
		// Phase A (min RTT 4 ms): N = 1 → 90/80; ratio 1 → 100/80 → 90/80.
		{"A N1 ratio1", 1, 4 * time.Millisecond, 4 * time.Millisecond, Bounds{Lo: 80, Hi: 90}, "phase A"},
		// Phase A: N = 10 → 4/2; ratio 12 → 80/60 → 4/2.
		{"A N10 ratio12", 10, 48 * time.Millisecond, 4 * time.Millisecond, Bounds{Lo: 2, Hi: 4}, ""},
		// Phase A: N = 2 → 80/60; ratio 37.5 → "35.0 ~" 20/10 → 20/10.
		{"A N2 ratio37.5", 2, 150 * time.Millisecond, 4 * time.Millisecond, Bounds{Lo: 10, Hi: 20}, ""},
		// Phase A, ratio 9.9 is still the first row (A's second row starts at 10.0).
		{"A N1 ratio9.9", 1, 99 * time.Millisecond, 10 * time.Millisecond, Bounds{Lo: 80, Hi: 90}, ""},
		// Phase boundary: min RTT exactly 100 ms is phase B. N = 6 → 55/30.
		{"B boundary", 6, 100 * time.Millisecond, 100 * time.Millisecond, Bounds{Lo: 30, Hi: 55}, "phase B"},
		{"A boundary", 6, 99 * time.Millisecond, 99 * time.Millisecond, Bounds{Lo: 10, Hi: 20}, "phase A"},
		// N above the table uses the N = 10 row.
		{"B N15", 15, 256 * time.Millisecond, 256 * time.Millisecond, Bounds{Lo: 5, Hi: 17}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := mustNew(t, "hayakawa2015", Params{}).Decide(view(t0, c.n, c.srtt, c.minRTT))
			if !d.Active || d.PerDst[dstA] != c.want {
				t.Fatalf("bounds = %+v (active %v), want %+v; reason %q", d.PerDst[dstA], d.Active, c.want, d.Reason)
			}
			if !strings.Contains(d.Reason, c.wantText) {
				t.Errorf("reason %q does not mention %q", d.Reason, c.wantText)
			}
		})
	}
}

func TestHayakawa2015TablesAreMonotoneExceptPaperQuirk(t *testing.T) {
	// The tables' max columns never grow with N or ratio_rtt. Table 2 B's min
	// column does (250 at N = 1, 300 at N = 2): a quirk of the paper, kept.
	for _, a := range []bool{true, false} {
		prevMax := uint32(1 << 31)
		for n := 1; n <= 12; n++ {
			mx, mn := HayakawaTable2(n, a)
			if mx > prevMax || mn > mx {
				t.Errorf("table 2 phaseA=%v N=%d: %d/%d after max %d", a, n, mx, mn, prevMax)
			}
			prevMax = mx
		}
		prevMax = 1 << 31
		for r := 0.5; r < 60; r += 0.25 {
			mx, mn := HayakawaTable3(r, a)
			if mx > prevMax || mn > mx {
				t.Errorf("table 3 phaseA=%v ratio=%v: %d/%d after max %d", a, r, mx, mn, prevMax)
			}
			prevMax = mx
		}
	}
	if _, mn1 := HayakawaTable2(1, false); mn1 != 250 {
		t.Errorf("table 2 B N=1 min = %d, want 250", mn1)
	}
	if _, mn2 := HayakawaTable2(2, false); mn2 != 300 {
		t.Errorf("table 2 B N=2 min = %d, want 300", mn2)
	}
}

func TestHayakawa2015Cadence(t *testing.T) {
	pol := mustNew(t, "hayakawa2015", Params{})
	d1 := pol.Decide(view(t0, 10, 256*time.Millisecond, 256*time.Millisecond))
	// 100 ms later the ratio jumped but the policy only looks every 0.5 s.
	d2 := pol.Decide(view(t0.Add(100*time.Millisecond), 10, 3*time.Second, 256*time.Millisecond))
	if d2.PerDst[dstA] != d1.PerDst[dstA] {
		t.Fatalf("re-evaluated after 100 ms: %+v → %+v", d1.PerDst[dstA], d2.PerDst[dstA])
	}
	d3 := pol.Decide(view(t0.Add(500*time.Millisecond), 10, 3*time.Second, 256*time.Millisecond))
	if d3.PerDst[dstA] != (Bounds{Lo: 1, Hi: 2}) {
		t.Fatalf("after 0.5 s at ratio 11.7: %+v, want {1 2}", d3.PerDst[dstA])
	}
}

func TestHirai2013(t *testing.T) {
	cases := []struct {
		name   string
		p      Params
		n      int
		minRTT time.Duration
		want   uint32
	}{
		// 20 Mbit/s × 256 ms = 640 000 B; / (1448 × 10) = 44.2 → 44.
		{"N10 256ms", Params{}, 10, 256 * time.Millisecond, 44},
		// N = 5: 640 000 / 7240 = 88.4 → 88.
		{"N5 256ms", Params{}, 5, 256 * time.Millisecond, 88},
		// α = 100 000 B: 540 000 / 14 480 = 37.3 → 37.
		{"N10 alpha", Params{Alpha: 100e3}, 10, 256 * time.Millisecond, 37},
		// 4 ms: 10 000 B / 14 480 < 1 → 1.
		{"N10 4ms", Params{}, 10, 4 * time.Millisecond, 1},
		// BWmax overrides the 20 Mbit/s: 54 Mbit/s × 256 ms / (1448 × 10) = 119.3 → 119.
		{"bwmax", Params{BWmax: 54e6}, 10, 256 * time.Millisecond, 119},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := mustNew(t, "hirai2013", c.p).Decide(view(t0, c.n, 2*c.minRTT, c.minRTT))
			if got := d.PerDst[dstA]; !d.Active || got != (Bounds{Hi: c.want}) {
				t.Fatalf("bounds = %+v, want hi %d only; reason %q", got, c.want, d.Reason)
			}
		})
	}
}

func TestHirai2013AdjustsEvery10s(t *testing.T) {
	pol := mustNew(t, "hirai2013", Params{})
	rtt := 256 * time.Millisecond
	if got := pol.Decide(view(t0, 10, rtt, rtt)).PerDst[dstA].Hi; got != 44 {
		t.Fatalf("N=10: hi %d, want 44", got)
	}
	// N drops to 5 at t = 3 s: held until 10 s have passed.
	for _, dt := range []time.Duration{3 * time.Second, 5 * time.Second, 8 * time.Second} {
		if got := pol.Decide(view(t0.Add(dt), 5, rtt, rtt)).PerDst[dstA].Hi; got != 44 {
			t.Fatalf("t=%v: hi %d, want 44 (held)", dt, got)
		}
	}
	if got := pol.Decide(view(t0.Add(10*time.Second), 5, rtt, rtt)).PerDst[dstA].Hi; got != 88 {
		t.Fatalf("t=10s: hi %d, want 88", got)
	}
	// A new destination is bounded at once.
	v := view(t0.Add(11*time.Second), 5, rtt, rtt)
	v.Flows = append(v.Flows, FlowView{Dst: dstB, MSS: 1448, SRTT: rtt, MinRTT: rtt / 2})
	if got := pol.Decide(v).PerDst[dstB].Hi; got != 44 {
		t.Fatalf("new destination: hi %d, want 44", got)
	}
}

func TestHayakawa2016Formula(t *testing.T) {
	cases := []struct {
		bwmax  float64
		n      int
		rtt    time.Duration
		seg    float64
		want   uint32
		reason string
	}{
		// Issue 5: BWmax 19 Mbit/s, N = 10, min RTT 256 ms:
		// 19e6 × 10^-0.15 = 13.451e6 bit/s; × 0.256 s = 3.4434e6 bit; / (1500 B × 8 × 10) = 28.7 → 28.
		{19e6, 10, 256 * time.Millisecond, 1500, 28, "1.5 KB = 1500 B"},
		// With 1.5 KB read as 1536 B: 3.4434e6 / 122 880 = 28.02 → 28 (the reading does not matter here).
		{19e6, 10, 256 * time.Millisecond, 1536, 28, "1.5 KB = 1536 B"},
		// N = 1: 19e6 × 0.256 / 12 000 = 405.3 → 405.
		{19e6, 1, 256 * time.Millisecond, 1500, 405, "N = 1"},
		// N = 4: 19e6 × 4^-0.15 = 15.43e6; × 0.256 / 48 000 = 82.3 → 82.
		{19e6, 4, 256 * time.Millisecond, 1500, 82, "N = 4"},
		// 4 ms, N = 10: 13.451e6 × 0.004 / 120 000 = 0.45 → at least 1.
		{19e6, 10, 4 * time.Millisecond, 1500, 1, "4 ms"},
	}
	for _, c := range cases {
		if got := Hayakawa2016Cwnd(c.bwmax, c.n, c.rtt, c.seg, 0.15); got != c.want {
			t.Errorf("%s: cwnd %d, want %d", c.reason, got, c.want)
		}
	}
}

func TestHayakawa2016Hysteresis(t *testing.T) {
	pol := mustNew(t, "hayakawa2016", Params{BWmax: 19e6})
	base := 256 * time.Millisecond
	steps := []struct {
		ratio  float64
		active bool
		want   Bounds
	}{
		{1.0, false, Bounds{}},      // off at start
		{3.0, false, Bounds{}},      // still off
		{5.5, false, Bounds{}},      // above 5.0 but control is off: nothing
		{6.0, false, Bounds{}},      // must exceed 6.0
		{6.5, true, Bounds{Hi: 1}},  // switches on; ratio > 5.0 → cwnd 1
		{5.5, true, Bounds{Hi: 1}},  // still > 5.0
		{4.0, true, Bounds{Hi: 28}}, // ≤ 5.0 → formula
		{5.0, true, Bounds{Hi: 28}}, // exactly 5.0 is not > 5.0
		{5.2, true, Bounds{Hi: 1}},
		{1.1, true, Bounds{Hi: 28}}, // stays on at low ratio
	}
	for i, s := range steps {
		v := view(t0.Add(time.Duration(i)*500*time.Millisecond), 10, time.Duration(s.ratio*float64(base)), base)
		d := pol.Decide(v)
		if d.Active != s.active || d.PerDst[dstA] != s.want {
			t.Fatalf("step %d ratio %.1f: active %v bounds %+v, want %v %+v; reason %q", i, s.ratio, d.Active, d.PerDst[dstA], s.active, s.want, d.Reason)
		}
	}
	// All flows gone: state forgotten, a new flow starts off again.
	if d := pol.Decide(View{Now: t0.Add(10 * time.Second)}); d.Active {
		t.Fatalf("no flows: active %+v", d)
	}
	if d := pol.Decide(view(t0.Add(11*time.Second), 10, base*2, base)); d.Active {
		t.Fatalf("new flow at ratio 2 after reset: active %+v", d)
	}
}

func TestHayakawa2016LooksOnlyEveryHalfSecond(t *testing.T) {
	pol := mustNew(t, "hayakawa2016", Params{})
	base := 256 * time.Millisecond
	if d := pol.Decide(view(t0, 10, base, base)); d.Active {
		t.Fatalf("start: active %+v", d)
	}
	// A spike 100 ms later is not seen: the next look is at 0.5 s.
	if d := pol.Decide(view(t0.Add(100*time.Millisecond), 10, 7*base, base)); d.Active {
		t.Fatalf("switched on between evaluations: %q", d.Reason)
	}
	if d := pol.Decide(view(t0.Add(500*time.Millisecond), 10, 7*base, base)); !d.Active || d.PerDst[dstA] != (Bounds{Hi: 1}) {
		t.Fatalf("at 0.5 s ratio 7: %+v, want on with hi 1", d)
	}
}

func TestDecisionBoundsFor(t *testing.T) {
	d := Decision{Default: Bounds{Lo: 1, Hi: 9}, PerDst: map[netip.Addr]Bounds{dstA: {Lo: 2, Hi: 5}}}
	if got := d.BoundsFor(dstA); got != (Bounds{Lo: 2, Hi: 5}) {
		t.Errorf("BoundsFor(%v) = %+v, want its own entry", dstA, got)
	}
	if got := d.BoundsFor(netip.MustParseAddr("10.77.9.2")); got != d.Default {
		t.Errorf("BoundsFor(another) = %+v, want Default", got)
	}
}

package analysis

import (
	"math"
	"testing"
)

// A group's kinds of terminal against the same kinds at the same point
// without coopcc: the reference is the cubic group of the same key; a
// group without one, a kind the reference lacks or has no valid run of,
// and the reference itself give no ratio.
func TestKindRatios(t *testing.T) {
	kinds := func(m map[string][]float64) map[string]Stat {
		out := map[string]Stat{}
		for k, xs := range m {
			out[k] = StatOf(xs)
		}
		return out
	}
	groups := []GroupSummary{
		{Key: "mode=cubic,n=4,delay=4ms,wired_rate=1Gbps", Mode: "cubic",
			GroupMbps: kinds(map[string][]float64{"phone-ac": {30, 36}, "tablet-old": {20}, "tablet-n": {}})},
		{Key: "mode=coop,n=4,delay=4ms,wired_rate=1Gbps", Mode: "coop",
			GroupMbps: kinds(map[string][]float64{"phone-ac": {22, 23}, "tablet-old": {23}, "tablet-n": {22}, "managed": {5}})},
		{Key: "mode=coop,n=4,delay=4ms,wired_rate=100Mbps", Mode: "coop",
			GroupMbps: kinds(map[string][]float64{"phone-ac": {20}})},
	}
	got := KindRatios(groups)
	want := []struct {
		kind  string
		ratio float64
	}{{"phone-ac", 22.5 / 33}, {"tablet-old", 23.0 / 20}}
	if len(got) != len(want) {
		t.Fatalf("got %d ratios %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Kind != w.kind || g.Mode != "coop" || g.Key != groups[1].Key || math.Abs(g.Ratio-w.ratio) > 1e-9 || g.Nothing.N != groups[0].GroupMbps[w.kind].N {
			t.Errorf("ratio %d: %+v, want %s %.4f against the 1 Gbit/s cubic group", i, g, w.kind, w.ratio)
		}
	}
}

package dcf

import (
	"testing"

	"github.com/coopcc/coopcc/emu/phy"
)

// Rate controllers read collisions as channel errors: on an error-free
// channel with one station they stay at (or find) 54 Mbps, and with ten
// contending stations ARF and AARF fall to lower rates and cost throughput
// against constant rate. The numbers are logged for docs/emulator.md.
func TestRateControlReadsCollisionsAsErrors(t *testing.T) {
	g, _ := phy.Lookup("g")
	res := map[string]map[int]SaturationResult{}
	for _, kind := range []string{"", "arf", "aarf", "minstrel"} {
		res[kind] = map[int]SaturationResult{}
		for _, n := range []int{1, 10} {
			r, err := Saturate(SaturationConfig{PHY: g, N: n, MSDU: 1500, Warmup: 1, Seconds: 10, Seed: 3, RateControl: kind})
			if err != nil {
				t.Fatal(err)
			}
			res[kind][n] = r
			t.Logf("%-8s n=%2d %.2f Mbps, mean PHY rate %.1f Mbps, p %.3f", kind, n, r.Throughput/1e6, r.MeanRate, r.CollisionP)
		}
	}
	if r := res[""][10].MeanRate; r != 54 {
		t.Fatalf("constant rate moved: %v", r)
	}
	for _, kind := range []string{"arf", "aarf", "minstrel"} {
		if r := res[kind][1].MeanRate; r < 50 {
			t.Errorf("%s alone on a clean channel: mean rate %.1f", kind, r)
		}
	}
	for _, kind := range []string{"arf", "aarf"} {
		if r := res[kind][10].MeanRate; r > 48 {
			t.Errorf("%s at n=10: mean rate %.1f, collisions should pull it down", kind, r)
		}
		if res[kind][10].Throughput >= res[""][10].Throughput {
			t.Errorf("%s at n=10 not below constant rate", kind)
		}
	}
}

// A per-rate PER table (here: nothing above 24 Mbps gets through) is what
// Minstrel adapts to: it settles at 24 Mbps; constant 54 Mbps delivers nothing.
func TestMinstrelAdaptsToPERTable(t *testing.T) {
	g, _ := phy.Lookup("g")
	per := map[float64]float64{36: 1, 48: 1, 54: 1}
	r, err := Saturate(SaturationConfig{PHY: g, N: 1, MSDU: 1500, Warmup: 1, Seconds: 10, Seed: 1, RateControl: "minstrel", PER: per})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("minstrel behind a 24 Mbps wall: %.2f Mbps, mean rate %.1f", r.Throughput/1e6, r.MeanRate)
	if r.MeanRate < 23.5 || r.MeanRate > 24 {
		t.Errorf("mean delivered rate %.2f, want 24 (a few frames go at the chain's lower stages)", r.MeanRate)
	}
	if r.Throughput < 15e6 {
		t.Errorf("throughput %.2f Mbps", r.Throughput/1e6)
	}
	c, err := Saturate(SaturationConfig{PHY: g, N: 1, MSDU: 1500, Warmup: 1, Seconds: 10, Seed: 1, PER: per})
	if err != nil {
		t.Fatal(err)
	}
	if c.Throughput != 0 {
		t.Errorf("constant 54 Mbps through PER 1 delivered %.2f Mbps", c.Throughput/1e6)
	}
}

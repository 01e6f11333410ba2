package bianchi

import (
	"math"
	"testing"

	"github.com/coopcc/coopcc/emu/phy"
)

func TestFixedPoint(t *testing.T) {
	for _, n := range []int{2, 5, 10, 20, 50} {
		tau, p := Solve(n, 16, 6)
		if got := 1 - math.Pow(1-tau, float64(n-1)); math.Abs(got-p) > 1e-9 {
			t.Fatalf("n=%d: p=%g but 1-(1-tau)^(n-1)=%g", n, p, got)
		}
		if math.Abs(Tau(p, 16, 6)-tau) > 1e-12 {
			t.Fatalf("n=%d: tau not consistent", n)
		}
	}
	// Bianchi's paper, Fig. 9 region: W=32, m=5, n=10 gives p around 0.2-0.3.
	if _, p := Solve(10, 32, 5); p < 0.15 || p > 0.35 {
		t.Fatalf("W=32 m=5 n=10: p=%g out of the paper's range", p)
	}
}

func TestDesignSanityNumbers(t *testing.T) {
	g, _ := phy.Lookup("g")
	// DESIGN §4: 1460 B payload (1500 B IP) at 54 Mbps: 29.7 / 28.8 / 26.7 / 24.6 Mbps for 1/5/10/20 stations.
	want := map[int]float64{1: 29.7, 5: 28.8, 10: 26.7, 20: 24.6}
	for n, w := range want {
		r, err := Saturation(g, n, 1500, 1)
		if err != nil {
			t.Fatal(err)
		}
		got := r.Throughput * 1460 / 1500 / 1e6
		if math.Abs(got-w)/w > 0.02 {
			t.Errorf("n=%d: %.2f Mbps, DESIGN says %.1f", n, got, w)
		}
	}
	c, err := TCPUploadCeiling(g, 2, 1448, 52, 2)
	if err != nil {
		t.Fatal(err)
	}
	if c < 22e6 || c > 26e6 {
		t.Fatalf("TCP ceiling %.2f Mbps, DESIGN says about 24", c/1e6)
	}
	t.Logf("TCP upload ceiling, 2 stations: %.2f Mbps", c/1e6)
	// DESIGN §6: about 24 Mbps for 10 terminals on 802.11g.
	if c10, _ := TCPUploadCeiling(g, 10, 1448, 52, 2); c10 < 22.5e6 || c10 > 25.5e6 {
		t.Fatalf("TCP ceiling for 10 stations %.2f Mbps, DESIGN says about 24", c10/1e6)
	}
}

package emu

import (
	"testing"
	"time"

	"github.com/coopcc/coopcc/emu/des"
)

// The real-time loop handles events at their wall-clock time (never early),
// stops on Stop, and delivers every synthetic frame. Lateness is reported,
// not asserted: this machine is shared (benchmarks measure it).
func TestRealTimeLoop(t *testing.T) {
	sim := des.New()
	rt, err := NewRealTime(sim, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	var early int
	var fired int
	for i := 1; i <= 200; i++ {
		at := des.Time(i) * 500 * des.Microsecond
		sim.At(at, func() {
			fired++
			if rt.now() < at {
				early++
			}
		})
	}
	go func() { time.Sleep(300 * time.Millisecond); rt.Stop() }()
	start := time.Now()
	if err := rt.Run(0); err != nil {
		t.Fatal(err)
	}
	if fired != 200 || early != 0 {
		t.Fatalf("fired %d of 200 events, %d early", fired, early)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 5*time.Second {
		t.Fatalf("Run returned after %v: 200 events over 100 ms, Stop at 300 ms", d)
	}
	t.Logf("lateness p50 %.0f µs p99 %.0f µs max %.0f µs", rt.Hist.Quantile(0.5), rt.Hist.Quantile(0.99), float64(rt.Hist.Max())/1e3)

	r, err := Bench(BenchOptions{PHY: "g", Stations: 5, PPS: 500, Frame: 1000, Duration: time.Second, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.OfferedPPS < 300 || r.Delivered < 0.95*r.OfferedPPS {
		t.Fatalf("bench: offered %.0f delivered %.0f frames/s", r.OfferedPPS, r.Delivered)
	}
}

// The busy-wait budget allows spinning up to its share of a 20 ms window
// and renews with the next window.
func TestSpinDuty(t *testing.T) {
	d := spinDuty{max: 0.5}
	if !d.allow(0) {
		t.Fatal("fresh window refused")
	}
	d.spent(10 * des.Millisecond)
	if d.allow(15 * des.Millisecond) {
		t.Fatal("spun 10 ms of a 20 ms window at 50 %: still allowed")
	}
	if !d.allow(20 * des.Millisecond) {
		t.Fatal("next window refused")
	}
}

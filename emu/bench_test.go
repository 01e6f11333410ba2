package emu

import (
	"testing"
	"time"
)

// BenchmarkEngineVirtual measures the handlers' cost per event (no waiting):
// 802.11ac, 20 stations, 40 000 frames/s offered, 10 virtual seconds.
func BenchmarkEngineVirtual(b *testing.B) {
	for _, phy := range []string{"g", "ac"} {
		b.Run(phy, func(b *testing.B) {
			var r BenchResult
			for i := 0; i < b.N; i++ {
				var err error
				r, err = Bench(BenchOptions{PHY: phy, Stations: 20, PPS: 40000, Frame: 1514, Duration: 10 * time.Second, Virtual: true, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(r.NsPerEvent, "ns/event")
			b.ReportMetric(r.EventsPerSec, "events/sim-s")
			b.ReportMetric(r.Delivered, "frames/sim-s")
		})
	}
}

// BenchmarkRealTime runs the real-time loop for 3 s per point and reports
// the lateness percentiles (`coopcc emu bench` sweeps more rates).
func BenchmarkRealTime(b *testing.B) {
	for _, c := range []struct {
		phy string
		pps float64
	}{{"g", 2000}, {"ac", 20000}} {
		b.Run(c.phy, func(b *testing.B) {
			var r BenchResult
			for i := 0; i < b.N; i++ {
				var err error
				r, err = Bench(BenchOptions{PHY: c.phy, Stations: 20, PPS: c.pps, Frame: 1514, Duration: 3 * time.Second, Priority: 10, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(r.Delivered, "frames/s")
			b.ReportMetric(r.EventsPerSec, "events/s")
			b.ReportMetric(r.P99, "p99-µs")
			b.ReportMetric(r.MaxUs, "max-µs")
			b.ReportMetric(100*r.CPU, "cpu-%")
		})
	}
}

func TestSustained(t *testing.T) {
	pt := func(pps, delivered, p99 float64, valid bool) BenchResult {
		return BenchResult{Opts: BenchOptions{PPS: pps}, Delivered: delivered, P99: p99, Report: &Report{Valid: valid}}
	}
	// Given out of order; the 40 000 point fails at 100 µs, so the later,
	// passing 60 000 point does not count.
	rs := []BenchResult{
		pt(60000, 59000, 80, false),
		pt(10000, 9990, 20, true),
		pt(40000, 38000, 150, false),
		pt(20000, 19900, 30, false),
	}
	for _, c := range []struct {
		name string
		ok   func(BenchResult) bool
		want float64
	}{
		{"p99 < 100 µs", Under(100), 19900},
		{"p99 < 200 µs", Under(200), 59000},
		{"valid", EmulatorValid, 9990},
		{"nothing passes", Under(10), 0},
	} {
		if got := Sustained(rs, c.ok); got != c.want {
			t.Errorf("%s: Sustained = %.0f, want %.0f", c.name, got, c.want)
		}
	}
	if got := Sustained(nil, Under(100)); got != 0 {
		t.Errorf("empty sweep: %.0f, want 0", got)
	}
	if EmulatorValid(BenchResult{}) {
		t.Error("a point without an emulator report counts as valid")
	}
}

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

package report

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/coopcc/coopcc/lab/analysis"
	"github.com/coopcc/coopcc/lab/results"
)

// scalabilityResults builds in memory what the full scalability preset
// records: 5 modes × N = 1..10 × 2 delays, 60 s at 10 Hz per flow.
func scalabilityResults() *results.Results {
	res := &results.Results{Dir: "synthetic", Meta: map[string]any{"scenario": "scalability"}}
	for _, d := range []float64{4, 256} {
		for _, mode := range []string{"cubic", "hayakawa2015", "hayakawa2016", "coop", "bbr"} {
			for n := 1; n <= 10; n++ {
				r := analysis.Run{Info: analysis.RunInfo{ID: fmt.Sprintf("mode=%s,n=%d,delay=%gms,rep=1", mode, n, d),
					Mode: mode, N: n, DelayMS: d, Rep: 1, Valid: true}, Iperf: map[string]analysis.Iperf{}, T0: 1}
				for k := 1; k <= n; k++ {
					name := fmt.Sprintf("sta%d", k)
					r.Info.Stations = append(r.Info.Stations, analysis.Station{Name: name, Managed: mode != "cubic" && mode != "bbr"})
					ip := analysis.Iperf{ReceivedBytes: 3e6 * 60 / float64(n), ReceivedSeconds: 60}
					for i := 0; i < 60; i++ {
						ip.Intervals = append(ip.Intervals, analysis.Interval{Start: float64(i), End: float64(i + 1), Bytes: 3e6 / float64(n)})
					}
					r.Iperf[name] = ip
					s := analysis.Series{Key: analysis.FlowKey{Station: name, Src: "a", Dst: "b"}}
					var acked uint64
					for i := 0; i < 600; i++ {
						cw := uint32(10 + i%40)
						st := uint8(0)
						if i%150 == 149 {
							cw, st = 1, 4
						}
						acked += uint64(3e5 / n)
						s.Samples = append(s.Samples, analysis.Sample{T: float64(i) / 10, Cwnd: cw, CAState: st, BytesAcked: acked,
							SRTT: time.Duration(d+10*math.Sin(float64(i)/7)+10) * time.Millisecond})
					}
					r.Flows = append(r.Flows, s)
				}
				res.Runs = append(res.Runs, r)
			}
		}
	}
	return res
}

// BenchmarkWriteScalability: the whole report (PNG and SVG) of a full
// scalability sweep (100 runs, 550 flows × 600 samples).
func BenchmarkWriteScalability(b *testing.B) {
	res := scalabilityResults()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Write(res, b.TempDir(), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

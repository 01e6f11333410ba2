package policy

import (
	"testing"
	"time"
)

// BenchmarkDecide measures one decision with 10 peers and 4 flows; the agent
// calls Decide every 0.5 s, so anything under a millisecond is negligible.
func BenchmarkDecide(b *testing.B) {
	base := 256 * time.Millisecond
	v := View{Now: t0, Peers: peers(9)}
	for i := range 4 {
		v.Flows = append(v.Flows, FlowView{Dst: dstA.Next(), MSS: 1448, SRTT: base * time.Duration(2+i), MinRTT: base, DeliveryRate: 1e5, AppLimited: i == 3})
	}
	v.Flows[1].Dst = dstB
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			pol, err := New(name, Params{StaticHi: 10})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				v.Now = t0.Add(time.Duration(i) * 500 * time.Millisecond) // every call a full evaluation
				pol.Decide(v)
			}
		})
	}
}

func BenchmarkKnee(b *testing.B) {
	var s []Sample
	for k := 2.0; k <= 64; k++ {
		for range 5 {
			s = append(s, Sample{Bound: k, RTT: time.Duration(min(k, 12) * float64(time.Millisecond))})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Knee(s); err != nil {
			b.Fatal(err)
		}
	}
}

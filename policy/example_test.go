package policy_test

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/coopcc/coopcc/policy"
)

// One decision of hayakawa2015 for a 256 ms path shared by 10 terminals.
func ExampleNew() {
	pol, err := policy.New("hayakawa2015", policy.Params{})
	if err != nil {
		panic(err)
	}
	dst := netip.MustParseAddr("10.77.0.1")
	v := policy.View{
		Now:   time.Unix(0, 0),
		Flows: []policy.FlowView{{Dst: dst, MSS: 1448, SRTT: 256 * time.Millisecond, MinRTT: 256 * time.Millisecond}},
	}
	for range 9 {
		v.Peers = append(v.Peers, policy.PeerView{ActiveFlows: 1})
	}
	d := pol.Decide(v)
	b := d.PerDst[dst]
	fmt.Println(d.Active, b.Lo, b.Hi)
	// Output: true 5 17
}

// Finding papers/003's "buffer limited" point in a calibration sweep.
func ExampleKnee() {
	var samples []policy.Sample
	for i, b := range policy.CalibrationPlan(10) {
		k := float64(i + 2) // multiplier
		rtt := 20*time.Millisecond + time.Duration(min(k, 8)*float64(5*time.Millisecond))
		samples = append(samples, policy.Sample{Bound: float64(b.Hi), RTT: rtt})
	}
	knee, _, err := policy.Knee(samples)
	fmt.Println(knee, err)
	// Output: 80 <nil>
}

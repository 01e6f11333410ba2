package agent

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/coopcc/coopcc/policy"
)

// BenchmarkTick100Flows is the agent's own cost per control-loop iteration
// with 100 managed flows to 10 destinations, 9 peers and the coop policy
// (monitor and datapath replaced by in-memory ones: their costs are
// measured in their own packages).
func BenchmarkTick100Flows(b *testing.B) {
	cfg := Defaults()
	cfg.Iface, cfg.Group.KeyFile = "wlan0", "k"
	flows := &memFlows{}
	for i := range 100 {
		f := flow(fmt.Sprintf("10.77.9.1:%d", 40000+i), fmt.Sprintf("10.77.10.%d:5201", i%10+1), uint32(10+i))
		f.Cookie = uint64(i)
		flows.flows = append(flows.flows, f)
	}
	peers := &memPeers{}
	for i := range 9 {
		peers.live = append(peers.live, PeerStatus{Sender: uint64(i + 1), ActiveFlows: 3, Cwnd: 30, SRTT: 40 * time.Millisecond, MinRTT: 10 * time.Millisecond, DeliveryRate: 2e6})
	}
	a, err := New(cfg, Deps{Flows: flows, Datapath: &memDatapath{}, Peers: peers,
		NewPolicy:  func(name string, _ map[string]any) (Policy, error) { return policy.New("coop", policy.Params{}) },
		IfaceAddrs: func(string) ([]netip.Addr, error) { return []netip.Addr{netip.MustParseAddr("10.77.9.1")}, nil },
	})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Unix(1000, 0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		a.Tick(now.Add(time.Duration(i) * 500 * time.Millisecond))
	}
}

package dcf

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/coopcc/coopcc/emu/bianchi"
	"github.com/coopcc/coopcc/emu/des"
	"github.com/coopcc/coopcc/emu/phy"
)

// A short version of `coopcc emu validate`: 802.11g, 54 Mbps, 1500 B, within 3% of Bianchi.
func TestSaturationMatchesBianchi(t *testing.T) {
	g, _ := phy.Lookup("g")
	for _, n := range []int{1, 2, 5, 10, 20} {
		sim, err := RunSaturation(g, n, 1500, 0.5, 20, 0, 7)
		if err != nil {
			t.Fatal(err)
		}
		model, _ := bianchi.Saturation(g, n, 1500, 1)
		e := (sim.Throughput - model.Throughput) / model.Throughput
		t.Logf("n=%2d sim %.2f Mbps model %.2f Mbps err %+.2f%% p sim %.3f model %.3f jain %.3f", n, sim.Throughput/1e6, model.Throughput/1e6, 100*e, sim.CollisionP, model.P, sim.Jain)
		if math.Abs(e) > 0.03 {
			t.Errorf("n=%d: emulator %.2f Mbps vs Bianchi %.2f Mbps (%.1f%%)", n, sim.Throughput/1e6, model.Throughput/1e6, 100*e)
		}
		if n > 1 && math.Abs(sim.CollisionP-model.P) > 0.03 {
			t.Errorf("n=%d: collision probability %.3f vs model %.3f", n, sim.CollisionP, model.P)
		}
		if sim.Jain < 0.98 {
			t.Errorf("n=%d: DCF should be fair among identical stations, Jain %.3f", n, sim.Jain)
		}
	}
}

func TestAggregationAndBroadcast(t *testing.T) {
	ac, _ := phy.Lookup("ac")
	r1, _ := RunSaturation(ac, 1, 1500, 0.1, 2, 0, 1)
	model, _ := bianchi.Saturation(ac, 1, 1500, ac.AMPDUMaxFrames)
	if e := math.Abs(r1.Throughput-model.Throughput) / model.Throughput; e > 0.03 {
		t.Fatalf("802.11ac single station %.1f Mbps vs model with 64-frame A-MPDU %.1f", r1.Throughput/1e6, model.Throughput/1e6)
	}
	if r1.Throughput < 500e6 {
		t.Fatalf("802.11ac with A-MPDU only %.1f Mbps", r1.Throughput/1e6)
	}

	g, _ := phy.Lookup("g")
	sim := des.New()
	m := NewMedium(sim, g, rand.New(rand.NewPCG(1, 2)))
	acc := DefaultAccess(g)
	ap := &Node{Name: "ap", IsAP: true, Associated: true, Access: acc, Q: NewFIFO(10)}
	m.AddNode(ap)
	var stas []*Node
	for i := 0; i < 3; i++ {
		s := &Node{Associated: true, Access: acc, Q: NewFIFO(10)}
		m.AddNode(s)
		stas = append(stas, s)
	}
	got := map[int]int{}
	m.Deliver = func(from *Node, f *Frame, to *Node) { got[to.ID]++ }
	m.Enqueue(ap, &Frame{MSDU: 100, To: Broadcast})
	m.Enqueue(stas[0], &Frame{MSDU: 100, To: ap.ID})
	sim.RunUntil(des.Second)
	if got[ap.ID] != 1 || got[stas[0].ID] != 1 || got[stas[1].ID] != 1 || got[stas[2].ID] != 1 {
		t.Fatalf("deliveries %v", got)
	}
	// Retry limit: a station whose link always fails drops after RetryLimit attempts.
	bad := &Node{Associated: true, FER: 1, Access: acc, Q: NewFIFO(10)}
	m.AddNode(bad)
	m.Enqueue(bad, &Frame{MSDU: 1500, To: ap.ID})
	sim.RunUntil(2 * des.Second)
	if bad.Stats.Attempts != uint64(g.RetryLimit) || bad.Stats.RetryDrops != 1 || bad.Stats.Retries != uint64(g.RetryLimit-1) {
		t.Fatalf("lossy link: %+v", bad.Stats)
	}
}

func TestAPPriorityAndRoundRobin(t *testing.T) {
	g, _ := phy.Lookup("g")
	share := func(apAcc Access) float64 {
		sim := des.New()
		m := NewMedium(sim, g, rand.New(rand.NewPCG(3, 4)))
		ap := &Node{Name: "ap", IsAP: true, Associated: true, Access: apAcc, Q: &Saturated{MSDU: 52, To: 1}}
		m.AddNode(ap)
		for i := 0; i < 5; i++ {
			m.AddNode(&Node{Associated: true, Access: DefaultAccess(g), Q: &Saturated{MSDU: 1500, To: 0}})
		}
		sim.RunUntil(5 * des.Second)
		var all uint64
		for _, n := range m.Nodes {
			all += n.Stats.TxFrames
		}
		return float64(ap.Stats.TxFrames) / float64(all)
	}
	dcf := share(DefaultAccess(g))
	prio := share(Access{AIFSN: 2, CWMin: 3, CWMax: 7, RetryLimit: 7})
	if dcf < 0.13 || dcf > 0.21 {
		t.Fatalf("plain DCF AP share %.3f, want about 1/6", dcf)
	}
	if prio < 2*dcf {
		t.Fatalf("AP with CW 3..7 got %.3f of the transmissions, plain DCF %.3f", prio, dcf)
	}

	q := NewRoundRobin(100)
	for i := 0; i < 10; i++ {
		q.Push(&Frame{MSDU: 1, To: 1})
	}
	q.Push(&Frame{MSDU: 1, To: 2})
	one := func(*Frame) int { return 1 }
	if a, b := q.PopBatch(1, 10, one), q.PopBatch(1, 10, one); a[0].To != 1 || b[0].To != 2 {
		t.Fatalf("round robin served %d then %d", a[0].To, b[0].To)
	}
	if q.Len() != 9 || len(q.Purge(1)) != 9 || q.Len() != 0 {
		t.Fatalf("purge left %d", q.Len())
	}
	f := NewFIFO(2)
	first, second, third := f.Push(&Frame{}), f.Push(&Frame{}), f.Push(&Frame{})
	if !first || !second || third {
		t.Fatalf("FIFO limit 2 not enforced: pushes %v %v %v", first, second, third)
	}
}

func TestFIFOAggregationGathersReceiver(t *testing.T) {
	q := NewFIFO(0)
	for i, to := range []int{1, 2, 1, 3, 1, 2} {
		q.Push(&Frame{MSDU: 100 + i, To: to})
	}
	one := func(*Frame) int { return 1 }
	got := q.PopBatch(2, 100, one)
	if len(got) != 2 || got[0].MSDU != 100 || got[1].MSDU != 102 {
		t.Fatalf("first aggregate %v", got)
	}
	rest := q.PopBatch(64, 100, one) // head is now the frame to 2: takes both frames to 2
	if len(rest) != 2 || rest[0].MSDU != 101 || rest[1].MSDU != 105 || q.Len() != 2 {
		t.Fatalf("second aggregate %v, left %d", rest, q.Len())
	}
	if f := q.PopBatch(1, 100, one); f[0].MSDU != 103 || q.PopBatch(1, 100, one)[0].MSDU != 104 || q.Len() != 0 || q.Bytes() != 0 {
		t.Fatalf("order of the rest broken")
	}
}

// An aggregate keeps its receiver's frames in order: it ends at the first
// frame to that receiver that does not fit, as a driver builds an A-MPDU
// from the head of its per-station queue. A smaller frame behind it (a
// burst's short last segment, a pure ACK) does not jump ahead of it: TCP
// would read the jump as reordering.
func TestFIFOAggregationStopsAtTheFirstFrameThatDoesNotFit(t *testing.T) {
	q := NewFIFO(0)
	for i, msdu := range []int{1000, 1000, 1000, 60} {
		q.Push(&Frame{MSDU: msdu + i, To: 1})
	}
	q.Push(&Frame{MSDU: 70, To: 2})
	size := func(f *Frame) int { return f.MSDU }
	got := q.PopBatch(64, 2500, size) // 1000 + 1001 fit, 1002 does not, 63 would
	if len(got) != 2 || got[0].MSDU != 1000 || got[1].MSDU != 1001 {
		t.Fatalf("aggregate %v, want the first two frames only", msdus(got))
	}
	rest := q.PopBatch(64, 2500, size)
	if len(rest) != 2 || rest[0].MSDU != 1002 || rest[1].MSDU != 63 {
		t.Fatalf("second aggregate %v, want [1002 63]", msdus(rest))
	}
	if last := q.PopBatch(64, 2500, size); len(last) != 1 || last[0].To != 2 || q.Len() != 0 || q.Bytes() != 0 {
		t.Fatalf("left %v, len %d, bytes %d", msdus(last), q.Len(), q.Bytes())
	}
}

func msdus(fs []*Frame) []int {
	out := make([]int, len(fs))
	for i, f := range fs {
		out[i] = f.MSDU
	}
	return out
}

// Broadcasts are sent once: one that collides is counted as lost, not as a
// retry-limit drop (which stays the unicast frames' counter).
func TestCollidedBroadcastIsLostNotRetryDropped(t *testing.T) {
	g, _ := phy.Lookup("g")
	sim := des.New()
	m := NewMedium(sim, g, rand.New(rand.NewPCG(1, 2)))
	sync := DefaultAccess(g)
	sync.CWMin, sync.CWMax = 0, 0 // both start in the same slot: a sure collision
	ap := &Node{Name: "ap", IsAP: true, Associated: true, Access: sync, Q: NewFIFO(10)}
	sta := &Node{Associated: true, Access: sync, Q: NewFIFO(10)}
	m.AddNode(ap)
	m.AddNode(sta)
	delivered := 0
	m.Deliver = func(*Node, *Frame, *Node) { delivered++ }
	m.Enqueue(ap, &Frame{MSDU: 100, To: Broadcast})
	m.Enqueue(sta, &Frame{MSDU: 100, To: Broadcast})
	sim.RunUntil(des.Second)
	for _, n := range []*Node{ap, sta} {
		if n.Stats.Collisions != 1 || n.Stats.BroadcastLost != 1 || n.Stats.RetryDrops != 0 || n.Stats.Retries != 0 {
			t.Errorf("%s: %+v, want one collision, one lost broadcast, no retry drop, no retry", n.Name, n.Stats)
		}
	}
	if delivered != 0 {
		t.Errorf("%d deliveries of collided broadcasts", delivered)
	}
}

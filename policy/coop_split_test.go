package policy

import (
	"math"
	"math/rand"
	"testing"
	"time"
)

func TestSplitDiffers(t *testing.T) {
	cp := CoopParams{}.Defaults()
	rated := func(rates ...float64) []terminal {
		ts := make([]terminal, len(rates))
		for i, r := range rates {
			ts[i] = terminal{link: r}
		}
		return ts
	}
	mixed := rated(433.3, 433.3, 150, 65)
	for _, c := range []struct {
		name  string
		cp    CoopParams
		terms []terminal
		want  bool
	}{
		{"papers/003's four terminals", cp, mixed, true},
		{"every rate fits 64 frames into a PPDU: the same weights", cp, rated(433.3, 150, 866.7), false},
		{"one rate unknown", cp, rated(433.3, 0, 65), false},
		{"alone", cp, rated(65), false},
		{"no aggregation (one frame per access): equal weights", CoopParams{AccessFrames: 1}.Defaults(), mixed, false},
		{"a configured split is not probed", CoopParams{WeightByLinkRate: true}.Defaults(), mixed, false},
		{"capabilities configured", CoopParams{WeightByCapability: true}.Defaults(), mixed, false},
	} {
		if got := splitDiffers(c.cp, c.terms); got != c.want {
			t.Errorf("%s: splitDiffers %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSplitSkew(t *testing.T) {
	cp := CoopParams{}.Defaults()
	papers003 := []terminal{{link: 433.3}, {link: 433.3}, {link: 150}, {link: 65}}
	if got, _ := splitSkew(cp, papers003); math.Abs(got-1.049) > 0.001 {
		t.Errorf("papers/003's four terminals: skew %.4f, want 1.049 (weights 64, 64, 64, 29.7)", got)
	}
	if got, _ := splitSkew(cp, []terminal{{link: 433.3}, {link: 866.7}}); got != 1 {
		t.Errorf("the same weights: skew %v, want 1", got)
	}
}

// The per-access split gives the terminals whose rate fills a PPDU more
// than equal rates do and the slow one less (terminalShare with withSplit).
func TestSplitMovesTheShares(t *testing.T) {
	cp := CoopParams{}.Defaults()
	fast := []terminal{{link: 433.3}, {link: 433.3}, {link: 150}, {link: 65}}
	slow := []terminal{{link: 65}, {link: 433.3}, {link: 433.3}, {link: 150}}
	const capacity = 12e6
	if eq := terminalShare(withSplit(cp, false), fast, capacity); eq != capacity/4 {
		t.Fatalf("equal rates: share %.0f, want %.0f", eq, capacity/4)
	}
	if got := terminalShare(withSplit(cp, true), fast, capacity); !(got > capacity/4) {
		t.Errorf("per access, a 433 Mbit/s terminal: share %.0f, want more than equal rates' %.0f", got, capacity/4)
	}
	if got := terminalShare(withSplit(cp, true), slow, capacity); !(got < capacity/4) {
		t.Errorf("per access, the 65 Mbit/s terminal: share %.0f, want less than equal rates' %.0f", got, capacity/4)
	}
}

// splitMedium is a group's delivery (B/s) at s segments per contender and
// a split: an aggregating medium's knee, times gain where the split is per
// access, with a relative scatter sd per evaluation.
func splitMedium(gain, sd float64, seed int64) func(s float64, access bool) float64 {
	rng := rand.New(rand.NewSource(seed))
	knee := aggregating(12e6, 4, 256)
	return func(s float64, access bool) float64 {
		d := knee(s) * (1 + sd*rng.NormFloat64())
		if access {
			d *= gain
		}
		return d
	}
}

// runSplit drives a leading queue probe (its group's split worth probing:
// splits) that has learned start segments per contender over dur against
// medium, and returns it and how many evaluations ran at a split other
// than the learned one.
func runSplit(t *testing.T, medium func(float64, bool) float64, start float64, splits bool, skew float64, dur time.Duration) (q queueProbe, probed int) {
	t.Helper()
	cp := CoopParams{}.Defaults()
	bites := func(float64) bool { return true }
	const e = int64(1000)
	q = steadyProbe(e)
	q.segs, q.triedUp = start, true // the climb is over: no up-probe without evidence
	for now := atEpoch(e, 0); now.Before(atEpoch(e, 0).Add(dur)); now = now.Add(probePeriod) {
		if q.accessNow() != q.access {
			probed++
		}
		tick := probeTick{n: 4, delivery: medium(q.current(cp), q.accessNow()), eligible: true, halves: true, splits: splits, skew: skew}
		q.observe(cp, now, probePeriod, tick, bites)
	}
	return q, probed
}

// Where the air binds (the per-access split carries a fifth more), the
// leader probes the split once and keeps it; where the wire binds (it
// carries the same), it probes it once and stays at equal rates; where it
// carries more but not enough to pay for the inequality it makes (papers/
// 003's terminals at 100 Mbit/s wired: × 1.08 of the sum at a skew of
// 1.049) it stays at equal rates too; at the delayed-ACK pair (a medium
// that has not paid for queue) and where the split changes nothing (splits
// false) it never probes it.
func TestQueueProbeLearnsTheSplitWhereItPays(t *testing.T) {
	for _, c := range []struct {
		name       string
		gain, sd   float64
		start      float64
		splits     bool
		skew       float64
		wantAccess bool
		wantProbe  bool
	}{
		{"the air binds", 1.2, 0.03, 32, true, 1, true, true},
		{"the air binds, papers/003's 1 Gbit/s", 1.29, 0.03, 32, true, 1.049, true, true},
		{"the wire binds", 1.0, 0.03, 32, true, 1, false, true},
		{"papers/003's 100 Mbit/s: a gain that does not pay for the skew", 1.08, 0.03, 32, true, 1.049, false, true},
		{"the air binds, at the pair", 1.2, 0.03, 2, true, 1, false, false},
		{"the same weights", 1.2, 0.03, 32, false, 1, false, false},
		// A gain of UpGain's size in a scatter it does not stand out of:
		// one probe all the same (a split probe is not pooled).
		{"a noisy medium", 1.08, 0.15, 32, true, 1, false, true},
	} {
		for seed := int64(1); seed <= 5; seed++ {
			q, probed := runSplit(t, splitMedium(c.gain, c.sd, seed), c.start, c.splits, c.skew, 60*time.Second)
			if c.sd > 0.1 {
				q.access = c.wantAccess // either verdict; the probe's count is the point
			}
			if q.access != c.wantAccess || (probed > 0) != c.wantProbe {
				t.Errorf("%s (seed %d): learned per access %v after %d evaluations at the other split, want %v (probed %v)", c.name, seed, q.access, probed, c.wantAccess, c.wantProbe)
			}
			if c.wantProbe && (!q.splitTried || probed > probeEnd+1) {
				t.Errorf("%s (seed %d): %d evaluations at the other split (tried %v), want one probe's first half", c.name, seed, probed, q.splitTried)
			}
		}
	}
}

// The leader announces a split probe's plan with the learned segments and
// the other split, and a follower puts both in force for the plan's phase;
// the learned split comes with the leader's learned value.
func TestQueueProbeFollowsTheLeadersSplit(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const e = int64(1000)
	lead := steadyProbe(e)
	lead.segs, lead.triedUp = 32, true
	tick := probeTick{n: 4, delivery: 3e6, eligible: true, halves: true, splits: true}
	bites := func(float64) bool { return true }
	for i := 0; i < ProbeEpochTicks; i++ {
		lead.observe(cp, atEpoch(e, i), probePeriod, tick, bites)
	}
	want := ProbePlan{Epoch: uint32(e + 1), Segments: 32, Access: true}
	if got := lead.announced(cp); got != want {
		t.Fatalf("the leader announces %+v, want the split probe %+v", got, want)
	}
	var f queueProbe
	for _, c := range []struct {
		name                string
		now                 time.Time
		l                   PeerView
		wantAccess, learned bool
		segs                float64
	}{
		{"before the plan's epoch", atEpoch(e, ProbeEpochTicks-1), PeerView{QueueSegments: 32, Plan: want}, false, false, 32},
		{"in the plan's phase", atEpoch(e+1, 1), PeerView{QueueSegments: 32, Plan: want}, true, false, 32},
		{"judged, rejected: no plan", atEpoch(e+1, probeEnd), PeerView{QueueSegments: 32}, false, false, 32},
		{"adopted by the leader", atEpoch(e+2, 0), PeerView{QueueSegments: 32, Access: true}, true, true, 32},
		{"the leader's up-probe at the learned split", atEpoch(e+3, 1), PeerView{QueueSegments: 32, Access: true, Plan: ProbePlan{Epoch: uint32(e + 3), Segments: 128, Access: true}}, true, true, 128},
	} {
		f.follow(cp, c.now, probePeriod, c.l)
		if f.accessNow() != c.wantAccess || f.access != c.learned || f.current(cp) != c.segs {
			t.Errorf("%s: per access now %v (learned %v) at %.0f segments, want %v (%v) at %.0f", c.name, f.accessNow(), f.access, f.current(cp), c.wantAccess, c.learned, c.segs)
		}
		if f.probing(cp) != (f.accessNow() != f.access || f.current(cp) != f.learned(cp)) {
			t.Errorf("%s: probing %v with the split %v against the learned %v", c.name, f.probing(cp), f.accessNow(), f.access)
		}
	}
}

// A group of a new size starts at equal rates and may probe the split
// again.
func TestQueueProbeSplitStartsAgainWithTheGroup(t *testing.T) {
	cp := CoopParams{}.Defaults()
	q := steadyProbe(1000)
	q.access, q.splitTried = true, true
	q.observe(cp, atEpoch(1000, 3), probePeriod, probeTick{n: 5, delivery: 3e6, eligible: true, halves: true, splits: true}, func(float64) bool { return true })
	if q.access || q.splitTried {
		t.Errorf("after the group grew: per access %v, tried %v; want equal rates, not tried", q.access, q.splitTried)
	}
}

// A chained step that was not sure at its epoch's end goes on as the next
// epoch's probe before the split probe does; the split comes at the epoch
// after.
func TestQueueProbeSplitWaitsForAChainedStepToGoOn(t *testing.T) {
	cp := CoopParams{}.Defaults()
	bites := func(float64) bool { return true }
	q := steadyProbe(1000)
	q.segs, q.next, q.resume, q.splits = 8, 1, true, true
	base := []float64{3e6, 3e6, 3e6}
	if p := q.choose(cp, 1001, base, bites); p.split || p.dir != 1 {
		t.Fatalf("with a chained step to go on: planned %+v, want the up-step 8 → 32", p)
	}
	if p := q.choose(cp, 1002, base, bites); !p.split {
		t.Fatalf("the epoch after: planned %+v, want the split probe", p)
	}
}

// A rejected split probe steps back to the same queue per contender, and
// the epoch's tail is the next one's baseline: the next up-step comes in
// the epoch right after it.
func TestQueueProbeUpStepRightAfterARejectedSplit(t *testing.T) {
	cp := CoopParams{}.Defaults()
	bites := func(float64) bool { return true }
	const e = int64(1000)
	q := steadyProbe(e)
	q.segs = 8 // adopted: the next up-step needs no evidence
	medium := splitMedium(1.0, 0.02, 1)
	upIn := map[int64]bool{}
	splitIn := int64(0)
	for now := atEpoch(e, 0); now.Before(atEpoch(e+4, 0)); now = now.Add(probePeriod) {
		ep, _, _ := epochAt(now, probePeriod)
		tick := probeTick{n: 4, delivery: medium(q.current(cp), q.accessNow()), eligible: true, halves: true, splits: true, skew: 1.049}
		q.observe(cp, now, probePeriod, tick, bites)
		if q.accessNow() != q.access && splitIn == 0 {
			splitIn = ep
		}
		upIn[ep] = upIn[ep] || q.current(cp) > q.learned(cp)
	}
	if splitIn == 0 || q.access || !q.splitTried {
		t.Fatalf("split probe in epoch %d, per access %v, tried %v: want one, rejected", splitIn, q.access, q.splitTried)
	}
	if !upIn[splitIn+1] {
		t.Errorf("no up-step in the epoch after the rejected split (%d); up-steps in %v", splitIn+1, upIn)
	}
}

// A follower says when it takes the leader's learned split.
func TestQueueProbeFollowerSaysItTookTheSplit(t *testing.T) {
	cp := CoopParams{}.Defaults()
	var f queueProbe
	f.follow(cp, atEpoch(1000, 0), probePeriod, PeerView{QueueSegments: 8})
	if note := f.follow(cp, atEpoch(1000, 1), probePeriod, PeerView{QueueSegments: 8, Access: true}); note != "split equal rates → per access: the group's probe leader's" {
		t.Errorf("note %q", note)
	}
	if note := f.follow(cp, atEpoch(1000, 2), probePeriod, PeerView{QueueSegments: 8, Access: true}); note != "" {
		t.Errorf("the same split again: note %q, want none", note)
	}
}

// A follower's windows take its leader's learned split: per access, a
// 433 Mbit/s terminal beside a 65 Mbit/s leader gets 64 / (64 + 29.7) of
// the capacity; at equal rates half.
func TestCoopFollowerSharesAsItsLeaderLearned(t *testing.T) {
	base, q := 4*time.Millisecond, 20*time.Millisecond
	const slow = 5.484e-3 * 65e6 / 12000 // 29.7 frames at 65 Mbit/s
	for _, access := range []bool{false, true} {
		c := newCoopT(t, Params{})
		p := inflatedPeer(base, q, 2e6)
		p.LinkRate, p.ID, p.QueueSegments, p.Access = 65, 1, 32, access
		d := c.Decide(View{Now: t0, ID: 2, LinkRate: 433, Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: 2e6}}, Peers: []PeerView{p}})
		want := 2e6
		if access {
			want = 4e6 * 64 / (64 + slow)
		}
		if got := c.targets[dstA]; math.Abs(got-want) > 0.001*want || d.Access != access {
			t.Errorf("leader per access %v: share %v (advertised per access %v), want %v", access, got, d.Access, want)
		}
	}
}

// A split probe goes from equal rates to per access only: a leader that
// already shares per access (taken over from a leader that left) does not
// probe back.
func TestQueueProbeSplitOneWay(t *testing.T) {
	cp := CoopParams{}.Defaults()
	q := steadyProbe(1000)
	q.segs, q.splits, q.access = 32, true, true
	if p := q.choose(cp, 1001, []float64{3e6, 3e6, 3e6}, func(float64) bool { return true }); p.split {
		t.Errorf("per access already: planned %+v, want no split probe", p)
	}
}

package policy

import (
	"strings"
	"testing"
	"time"
)

func TestPayoffReversesACompetitionThatLostThroughputAndGainedDelay(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(secs(s)) }
	const offAfter, offFor = time.Second, 30 * time.Second
	// The lab's testbed2012 trace (10 coop terminals, 256 ms): 1.3 MB/s at
	// 1.3 s RTT at the verdict; competing, the delivery falls to 0.4 MB/s
	// and the RTT grows by a second every two seconds.
	var p payoff
	for s := 0.0; s < 5; s += 0.5 {
		p.note(1.3e6, 1.3e6)
	}
	p.verdict(at(5), 1.3)
	reversedAt := -1.0
	for s := 5.5; s < 30; s += 0.5 {
		p.note(0.4e6, 0.4e6)
		rtt := 1.3 + (s-5)/2
		if why := p.judge(at(s), rtt, offAfter, offFor); why != "" {
			if !strings.Contains(why, "cooperating again") || !strings.Contains(why, "30s") {
				t.Fatalf("reason %q: want what happened and the hold-off", why)
			}
			reversedAt = s
			break
		}
	}
	// Two round trips at the verdict's RTT (2.6 s) to settle, the RTT at
	// 2 × 1.3 s from 7.6 s, and the mean over payCount evaluations.
	if reversedAt < 9 || reversedAt > 9.5 {
		t.Fatalf("reversed at %.1f s, want 9–9.5 s", reversedAt)
	}
	if p.trusted(at(reversedAt+29)) || !p.trusted(at(reversedAt+30)) {
		t.Fatal("hold-off is not OffFor")
	}
	// Reversed again right after: the hold-off doubles, up to 8 × OffFor.
	want := []time.Duration{60 * time.Second, 120 * time.Second, 240 * time.Second, 240 * time.Second}
	now := reversedAt + 30
	for i, w := range want {
		p.note(1.3e6, 1.3e6)
		p.note(1.3e6, 1.3e6)
		p.verdict(at(now), 1.3)
		end := collapse(&p, at, now+3, 0.3e6)
		if end < 0 {
			t.Fatalf("reversal %d: none", i+2)
		}
		if p.trusted(at(end).Add(w-time.Second)) || !p.trusted(at(end).Add(w)) {
			t.Fatalf("reversal %d: hold-off is not %v", i+2, w)
		}
		now = end + w.Seconds()
	}
	// An off period that paid (ran its course) forgives: the next
	// reversal's hold-off is OffFor again.
	p.verdict(at(now), 1.3)
	p.ended()
	p.verdict(at(now+1), 1.3)
	if end := collapse(&p, at, now+4, 0.1e6); end < 0 || p.trusted(at(end+29)) || !p.trusted(at(end+30)) {
		t.Fatal("after an off period that paid: want a reversal with a hold-off of 30 s")
	}
}

// collapse feeds p a group delivering rate (B/s) at an RTT of 3 s from
// second from on, and returns the second of the reversal (-1: none in 10 s).
func collapse(p *payoff, at func(float64) time.Time, from, rate float64) float64 {
	for s := from; s < from+10; s += 0.5 {
		p.note(rate, rate)
		if p.judge(at(s), 3, time.Second, 30*time.Second) != "" {
			return s
		}
	}
	return -1
}

// TestPayoffReturnThePeersDoNotJoin: a return (payoff.back) that most of
// the group has not joined is not judged by its queue; when, twice the
// judgment's wait (two round trips at the reversal's RTT) after the
// reversal, most peers still say they have no bound, it did not pay. A
// peer whose latest status says it is under bounds has joined, however
// late that status came: all-coop terminals reverse seconds apart, and
// their statuses wait in the AP's queue.
func TestPayoffReturnThePeersDoNotJoin(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(secs(s)) }
	const offAfter = time.Second
	cases := []struct {
		name  string
		peers peersBack
		again float64 // s after the reversal (-1 = not in 20 s)
	}{
		{"the peer competes on", peersBack{heard: 0, bounded: 0, peers: 1}, 6},
		{"two of three peers compete on", peersBack{heard: 1, bounded: 1, peers: 3}, 6},
		{"the peer's status that it is back came late", peersBack{heard: 0, bounded: 1, peers: 1}, -1},
		{"one of three peers competes on, its statuses late", peersBack{heard: 1, bounded: 2, peers: 3}, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p payoff
			p.distrust = at(30)           // a reversal's hold-off
			p.back(at(0), 3, 1.5, at(25)) // the queue 3 s, the RTT 1.5 s: a wait of 3 s
			got := -1.0
			for s := 0.5; s < 20; s += 0.5 {
				if _, why := p.returned(at(s), 3+0.1*s, 0.04, 1.5, tc.peers, offAfter); why != "" {
					if !strings.Contains(why, "did not come back") {
						t.Fatalf("reason %q: want why", why)
					}
					got = s
					break
				}
			}
			if got != tc.again {
				t.Fatalf("competing again %.1f s after the reversal (-1 = not in 20 s), want %.1f", got, tc.again)
			}
		})
	}
}

func TestPayoffKeepsACompetitionThatPays(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(secs(s)) }
	cases := []struct {
		name     string
		delivery float64 // B/s while competing (1e6 at the verdict)
		rtt      float64 // s while competing (0.5 at the verdict)
	}{
		// Beside hosts that squeezed the group: competing gives it more,
		// whatever it does to the RTT (its own station queue fills).
		{"more throughput, more delay", 1.6e6, 2.5},
		// The same throughput at several times the delay is no loss of
		// throughput: kept (what the hosts' queue does to the RTT is
		// theirs).
		{"as much throughput, more delay", 0.95e6, 2.5},
		// Less throughput at the same delay: the medium changed, not the
		// queue's owner.
		{"less throughput, same delay", 0.3e6, 0.6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p payoff
			for i := 0; i < 10; i++ {
				p.note(1e6, 1e6)
			}
			p.verdict(at(0), 0.5)
			for s := 0.5; s < 30; s += 0.5 {
				p.note(tc.delivery, tc.delivery)
				if why := p.judge(at(s), tc.rtt, time.Second, 30*time.Second); why != "" {
					t.Fatalf("t=%.1f: reversed: %q", s, why)
				}
			}
		})
	}
	// Nothing is judged before two round trips at the verdict's RTT, and
	// then over payCount evaluations.
	var p payoff
	p.note(1e6, 1e6)
	p.verdict(at(0), 1)
	if end := collapse(&p, at, 0.5, 0); end != 3.5 {
		t.Fatalf("reversed at %.1f s, want 3.5 s (settled at 2 s, then four evaluations)", end)
	}
}

// TestPayoffReversesOnlyWhatPaidNeitherTheTerminalNorTheGroup: a peer's
// reports are half of the judgement. One that lies — a high delivery at the
// verdict, nothing after — cannot make an off period reversed while this
// terminal's own delivery says competing paid; and a terminal that alone
// gains while the group loses (a lone competitor) is not reversed either.
func TestPayoffReversesOnlyWhatPaidNeitherTheTerminalNorTheGroup(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(secs(s)) }
	cases := []struct {
		name               string
		ownRef, groupRef   float64 // B/s before the verdict
		ownComp, groupComp float64 // B/s competing
		reversed           bool
	}{
		{"both fell (rate adaptation's collapse)", 1e6, 1e6, 0.3e6, 0.3e6, true},
		{"a lying peer: the group's per-terminal rate falls, ours does not", 1e6, 8e6, 1e6, 0.5e6, false},
		{"a lone competitor: ours rose, the group's fell", 1e6, 1e6, 2e6, 0.6e6, false},
		{"ours fell, the group's rose (peers that gained)", 1e6, 1e6, 0.5e6, 1.2e6, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p payoff
			for i := 0; i < 10; i++ {
				p.note(tc.ownRef, tc.groupRef)
			}
			p.verdict(at(0), 0.5)
			got := false
			for s := 0.5; s < 10 && !got; s += 0.5 {
				p.note(tc.ownComp, tc.groupComp)
				got = p.judge(at(s), 2, time.Second, 30*time.Second) != ""
			}
			if got != tc.reversed {
				t.Fatalf("reversed %v, want %v", got, tc.reversed)
			}
		})
	}
}

// coopThroughAVerdict drives a terminal and one peer at 256 ms through a
// verdict: a queue that drains with the cuts (theirs) and then stays at
// 1 s although coop cuts. It returns the decision function (second, queue,
// each terminal's delivery), the second of the verdict and the peer's
// reported upper bound (0 = none: the peer competes too), which the test
// may set.
func coopThroughAVerdict(t *testing.T) (at func(s float64, q time.Duration, rate float64) Decision, offAt float64, peerHi *uint32) {
	t.Helper()
	c := newCoopT(t, Params{})
	base := 256 * time.Millisecond
	peerHi = new(uint32)
	at = func(s float64, q time.Duration, rate float64) Decision {
		peer := inflatedPeer(base, q, rate)
		peer.Hi = *peerHi
		return c.Decide(View{Now: t0.Add(secs(s)),
			Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: rate, Cwnd: 2000}},
			Peers: []PeerView{peer}})
	}
	for s := 0.0; s < 30; s += 0.5 {
		if d := at(s, time.Second, 650e3); d.Mode == ModeCompeting {
			return at, s, peerHi
		}
	}
	t.Fatal("no verdict on a queue of 1 s that ignores 30 s of cuts")
	return nil, 0, nil
}

// reverse drives at (coopThroughAVerdict) through competing that does not
// pay — the group's delivery falls to a third and its RTT grows by half a
// second a second — and returns the decision that cooperates again and
// its second (-1: none in 15 s).
func reverse(at func(s float64, q time.Duration, rate float64) Decision, offAt float64) (Decision, float64) {
	for s := offAt + 0.5; s < offAt+15; s += 0.5 {
		q := time.Second + secs(0.5*(s-offAt))
		if d := at(s, q, 220e3); d.Mode != ModeCompeting {
			return d, s
		}
	}
	return Decision{}, -1
}

func TestCoopCooperatesAgainWhenCompetingDoesNotPay(t *testing.T) {
	at, offAt, peerHi := coopThroughAVerdict(t)
	// Competing, the group's delivery falls to a third and its RTT grows
	// (rate adaptation collapsing under the released CUBIC).
	back, backAt := reverse(at, offAt)
	if backAt < 0 {
		t.Fatal("competing that lost throughput and tripled the RTT was kept for 15 s")
	}
	if !strings.Contains(back.Reason, "cooperating again") {
		t.Fatalf("back without saying why: %q", back.Reason)
	}
	// The windows are sized for the target, to drain the group's own queue:
	// at 70 % of what the group delivered when it cooperated (1.3 MB/s,
	// this terminal's half) over 256 ms and a target of 38 ms, 92 segments
	// — not for the queue of seconds as it is (860).
	hi := back.PerDst[dstA].Hi
	if hi < 80 || hi > 100 {
		t.Fatalf("hi %d segments on the return, want the target's window at the hold (92), not the queue's", hi)
	}
	// No verdict during the hold-off while the group is back under bounds
	// and its queue drains (a group whose peer competes on is judged by
	// TestCoopCompetesAgainWhenTheReturnDoesNotPay), and while the queue
	// drains the estimate holds (the law alone halves it every evaluation
	// this far above the target).
	*peerHi = 60
	for s := backAt + 0.5; s < backAt+29.5; s += 0.5 {
		d := at(s, time.Second+secs(2/(1+s-backAt)), 220e3)
		if d.Mode == ModeCompeting || d.PerDst[dstA].Hi == 0 {
			t.Fatalf("t=%.1f: competing again within the hold-off: %q", s, d.Reason)
		}
		if d.PerDst[dstA].Hi < hi*9/10 {
			t.Fatalf("t=%.1f: hi %d while the queue drains, want the hold's %d", s, d.PerDst[dstA].Hi, hi)
		}
	}
	// Back at the target the hold goes: the law takes the estimate from there.
	if d := at(backAt+30, 0, 220e3); d.PerDst[dstA].Hi == 0 {
		t.Fatalf("no bounds at the target: %q", d.Reason)
	}
}

// TestCoopKeepsCompetingWhenPeersGoUnheard: behind hosts that fill the AP's
// queue the peers' status messages are lost and the group that is heard
// shrinks; its delivery per terminal, not its sum, is what competing is
// judged by (lab, coexistence N = 10 with 4 coop terminals, 2026-11-27: a
// sum over four terminals at the verdict against one after, and the off
// period was reversed beside the hosts).
func TestCoopKeepsCompetingWhenPeersGoUnheard(t *testing.T) {
	c := newCoopT(t, Params{})
	base := 256 * time.Millisecond
	at := func(s float64, q time.Duration, peers int) Decision {
		var pv []PeerView
		for i := 0; i < peers; i++ {
			pv = append(pv, inflatedPeer(base, q, 650e3))
		}
		return c.Decide(View{Now: t0.Add(secs(s)),
			Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: 650e3, Cwnd: 2000}},
			Peers: pv})
	}
	offAt := -1.0
	for s := 0.0; s < 30; s += 0.5 {
		if d := at(s, time.Second, 3); d.Mode == ModeCompeting {
			offAt = s
			break
		}
	}
	if offAt < 0 {
		t.Fatal("no verdict")
	}
	// Competing: every terminal still delivers what it did, the RTT
	// triples, and only one peer of three is heard.
	for s := offAt + 0.5; s < offAt+29.5; s += 0.5 {
		if d := at(s, 3*time.Second, 1); d.Mode != ModeCompeting {
			t.Fatalf("t=%.1f (verdict at %.1f): reversed when peers went unheard: %q", s, offAt, d.Reason)
		}
	}
}

func TestCoopKeepsCompetingThatPays(t *testing.T) {
	at, offAt, _ := coopThroughAVerdict(t)
	// Beside hosts that squeezed the group: competing, its delivery rises
	// while its own CUBIC triples the RTT. The off period runs its course.
	for s := offAt + 0.5; s < offAt+29.5; s += 0.5 {
		if d := at(s, 3*time.Second, 900e3); d.Mode != ModeCompeting {
			t.Fatalf("t=%.1f (verdict at %.1f): competing that pays was ended: %q", s, offAt, d.Reason)
		}
	}
}

// TestCoopCompetesAgainWhenTheReturnDoesNotPay: a reversal is judged by the
// queue once the group is back under bounds (payoff.returned, Decide end to
// end). A queue of the group's own falls within two round trips (by a
// fifth is enough) and the return stands; one that does not fall (hosts without coopcc whose queue
// grows under rate adaptation whatever coop does) sends the terminal back
// to competing for the rest of the off period, and that is not reversed
// again. A return its peer does not join (the peer competes on) is judged
// twice that wait after the reversal, whatever the queue: the peer keeps
// it.
func TestCoopCompetesAgainWhenTheReturnDoesNotPay(t *testing.T) {
	cases := []struct {
		name     string
		peerHi   uint32                        // the peer's bound after the return (0 = competing)
		queue    func(s float64) time.Duration // the group's queue s seconds after the return
		competes bool
		waits    float64 // judged this many waits (two round trips at the reversal's RTT) after the return
	}{
		{"the hosts' queue goes on growing", 60, func(s float64) time.Duration { return secs(3.2 + 0.2*s) }, true, 1},
		{"the group's own queue drains", 60, func(s float64) time.Duration { return secs(max(0.1, 3.2-2*s)) }, false, 1},
		// Under ARF a group's own queue may fall by less than half in two
		// round trips (lab, an all-coop group of 6: 814 → 490 ms).
		{"the group's own queue falls by 40 %", 60, func(s float64) time.Duration { return secs(max(1.9, 3.2-s)) }, false, 1},
		{"the peer still competes", 0, func(s float64) time.Duration { return secs(max(0.1, 3.2-2*s)) }, true, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			at, offAt, peerHi := coopThroughAVerdict(t)
			_, backAt := reverse(at, offAt)
			if backAt < 0 {
				t.Fatal("no reversal")
			}
			*peerHi = tc.peerHi
			// The RTT at the reversal: 0.256 + 1 + (backAt − offAt)/2 s;
			// judged two round trips at it after the group is back.
			settle := 2 * (0.256 + 1 + (backAt-offAt)/2)
			againAt := -1.0
			var again Decision
			for s := backAt + 0.5; s < backAt+25; s += 0.5 {
				if d := at(s, tc.queue(s-backAt), 220e3); d.Mode == ModeCompeting {
					againAt, again = s, d
					break
				}
			}
			if !tc.competes {
				if againAt >= 0 {
					t.Fatalf("competing again %.1f s after the return: %q", againAt-backAt, again.Reason)
				}
				return
			}
			if want := tc.waits * settle; againAt < backAt+want || againAt > backAt+want+1 {
				t.Fatalf("competing again %.1f s after the return, want %.0f × two round trips at the reversal's RTT (%.1f s)", againAt-backAt, tc.waits, want)
			}
			if !strings.Contains(again.Reason, "did not pay either") || again.PerDst[dstA].Hi != 0 {
				t.Fatalf("competing again: %q, bounds %+v: want no upper bound and why", again.Reason, again.PerDst[dstA])
			}
			// The rest of the off period, extended by the return's time:
			// the verdict's 30 s in all, at an RTT under OffFor/OffRounds
			// (stretch: TestCoopOffPeriodLastsTenRoundTrips).
			end := offAt + 30 + (againAt - backAt)
			q := func(s float64) time.Duration { return min(tc.queue(s-backAt), time.Second) }
			for s := againAt + 0.5; s < end-0.5; s += 0.5 {
				if d := at(s, q(s), 100e3); d.Mode != ModeCompeting {
					t.Fatalf("t=%.1f: the resumed off period (until %.1f) ended: %q", s, end, d.Reason)
				}
			}
			if d := at(end+0.5, q(end+0.5), 100e3); d.Mode == ModeCompeting {
				t.Fatalf("still competing after the resumed off period: %q", d.Reason)
			}
		})
	}
}

// TestCoopResumedOffPeriodSettlesAtTheRTTOfTheResume: four terminals whose
// returns did not pay compete again, each on its own judgment, seconds
// apart. An off period resumed at an RTT of 5 s must not end by the
// majority rule on the peers' statuses from before their own resumes — it
// settled over two round trips at the verdict's RTT (1.3 s here), and the
// terminal was back under bounds 3 s after it competed again, before its
// peers followed it. A group that did not follow ends it after two round
// trips at the RTT of the resume, and the decision says why.
func TestCoopResumedOffPeriodSettlesAtTheRTTOfTheResume(t *testing.T) {
	run := func(peersResumeAfter float64) (againAt, endedAt float64, ended Decision) {
		c := newCoopT(t, Params{})
		base := 256 * time.Millisecond
		var peerHi uint32
		at := func(s float64, q time.Duration, rate float64) Decision {
			var peers []PeerView
			for i := 0; i < 3; i++ {
				p := inflatedPeer(base, q, rate)
				p.Hi, p.Sent = peerHi, t0.Add(secs(s-0.2)) // statuses 200 ms old
				peers = append(peers, p)
			}
			return c.Decide(View{Now: t0.Add(secs(s)),
				Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: base + q, MinRTT: base, DeliveryRate: rate, Cwnd: 2000}},
				Peers: peers})
		}
		offAt := -1.0 // every terminal competes: the peers' statuses say no bound
		for s := 0.0; s < 30 && offAt < 0; s += 0.5 {
			if at(s, time.Second, 650e3).Mode == ModeCompeting {
				offAt = s
			}
		}
		_, backAt := reverse(at, offAt)
		if offAt < 0 || backAt < 0 {
			t.Fatalf("verdict at %.1f s, reversal at %.1f s: want both", offAt, backAt)
		}
		peerHi = 60 // the peers reversed too; the hosts' queue goes on growing
		queue := func(s float64) time.Duration { return secs(3.2 + 0.2*(s-backAt)) }
		againAt = -1
		for s := backAt + 0.5; s < backAt+25 && againAt < 0; s += 0.5 {
			if at(s, queue(s), 220e3).Mode == ModeCompeting {
				againAt = s
			}
		}
		if againAt < 0 {
			t.Fatal("the return that did not pay was kept")
		}
		for s := againAt + 0.5; s < againAt+20; s += 0.5 {
			if s >= againAt+peersResumeAfter {
				peerHi = 0
			}
			if d := at(s, queue(s), 220e3); d.Mode != ModeCompeting {
				return againAt, s, d
			}
		}
		return againAt, -1, Decision{}
	}
	// The peers compete again 3.5 s later: the terminal's off period goes on.
	if againAt, endedAt, d := run(3.5); endedAt >= 0 {
		t.Errorf("peers competing again 3.5 s after this terminal: its resumed off period ended %.1f s after it competed again: %q", endedAt-againAt, d.Reason)
	}
	// The peers stay under bounds: two round trips at the RTT of the
	// resume (0.256 + 3.2 + 0.2 × 8 s), and the decision says why.
	againAt, endedAt, d := run(1e9)
	rtt := 0.256 + 3.2 + 0.2*8
	if endedAt < 0 || endedAt-againAt < 2*rtt || endedAt-againAt > 2*rtt+1 {
		t.Fatalf("peers under bounds: the resumed off period ended %.1f s after it began (-1 = not in 20 s), want two round trips at its RTT (%.1f s)", endedAt-againAt, 2*rtt)
	}
	if !strings.Contains(d.Reason, "off period ended after") || !strings.Contains(d.Reason, "3 of 3 peers") {
		t.Fatalf("the early end does not say why: %q", d.Reason)
	}
}

package policy

import (
	"fmt"
	"time"
)

// payoff judges competitive mode by what it brings, not by the signal that
// entered it. The elasticity test (compete) infers from the delay that the
// queue is someone else's; where that inference is wrong — rate adaptation
// (ARF, Minstrel) slowing a medium the group itself overloads, so that the
// queue grows while the group cuts — releasing the bounds hands the medium
// to the kernel's CUBIC, whose backlogged stations collide more, whose rates
// fall further, and whose queue grows by seconds: the outcome that
// cooperating was meant to prevent (testbed2012 in the lab, 10 coop
// terminals at 256 ms, 2026-11-27: the group delivered 1.3 MB/s at 1.3 s
// RTT when its agents gave their verdicts, and 0.2–0.6 MB/s at 3–15 s RTT
// after). Beside hosts that keep the queue full the outcome is the reverse:
// the terminals were squeezed before the verdict, and competing gives them
// more.
//
// So the verdict is an experiment whose result is measured: the delivery
// (smoothed; the lower of this terminal's and the group's per terminal,
// note) and the group's RTT at the verdict are the reference. The group's
// per terminal, because the group that is heard changes: behind
// hosts that fill the AP's queue the peers' status messages are lost, and
// the group's sum fell with the peers it counted (lab, coexistence N = 10,
// 4 coop terminals beside 6 CUBIC hosts, 2026-11-27: a reference of four
// terminals' delivery against one terminal's, and the off period was
// reversed beside hosts that kept the queue). Once
// the off period has run for max(OffAfter, two round trips at the verdict's
// RTT), a group whose RTT has grown to PayRTT × the reference while what it
// delivered averaged under PayLoss × the reference since then lost throughput
// and gained delay by competing: the queue was its own. coop then ends the
// off period at once, sizes its windows for the target (the drain, not the
// elasticity test's cut of a third), and takes no verdict for a while —
// OffFor, doubling (up to 8 ×) with each reversal in a row, back to OffFor
// after an off period that paid (was not reversed). This is "switch off when
// it does not help" (papers/004 §VI) turned on the switch-off itself, as the
// Guard (guard.go) turns it on control: the papers' future work asks that the
// middleware never be worse than the standard algorithm, and it can be worse
// by leaving as well as by staying.
type payoff struct {
	smooth float64 // the lower of own and the group's delivery per terminal, smoothed (B/s; 0 = none yet)

	at        time.Time // the verdict under judgment; zero = none
	rate, rtt float64   // the reference delivery (smooth, B/s) and the group's RTT (s) at the verdict
	// sum and count of last at the evaluations since the verdict's
	// settling time: their mean is what competing delivered (the
	// AP hands the ACKs back in bursts, a second's delivery under rate
	// adaptation moves by ×10, and a maximum of it, even smoothed, is a
	// burst).
	sum      float64
	count    int
	last     float64   // the higher of own and the group's delivery per terminal at the last evaluation
	distrust time.Time // no verdict before this (after a reversal)
	// drain is the least capacity estimate per terminal (B/s) after a
	// reversal until the group's queue is first back at its target (hold).
	drain     float64
	holdoff   time.Duration
	reversals int // reversals in a row
	// The return under judgment (returned): the reversal's time (zero =
	// none), the group's queue (s) and RTT (s) then, the end of the off
	// period it cut short, and when most of the group was first back
	// under bounds after it (zero = not yet).
	backAt, backFrom time.Time
	backD, backRTT   float64
	backUntil        time.Time
}

const (
	// PayLoss: competing whose mean delivery stayed under this fraction of
	// what was delivered at the verdict lost throughput.
	PayLoss = 0.8
	// PayRTT: ... and one whose RTT grew to this multiple of the RTT at
	// the verdict gained delay: the queue was the group's own.
	PayRTT = 2.0
	// paySmooth is the weight of one evaluation in the smoothed delivery
	// (a time constant of about four evaluations, 2 s at the default 0.5 s):
	// the group's delivery moves ±10 % from one evaluation to the next on a
	// constant-rate medium, and the AP hands ACKs back in bursts.
	paySmooth = 0.25
	// payCount is the least number of evaluations the mean is taken over.
	payCount = 4
)

// note records, at an evaluation, this terminal's delivery own and the
// group's delivery per terminal group (B/s). The reference (smooth) follows
// the lower of the two and what competing delivered (last) is the higher:
// competing has not paid only if it did not pay this terminal and did not
// pay the group. A peer's reports are the group's half only, so a peer
// that lies about its delivery — high at the verdict, nothing after — can
// keep an off period from being reversed (the behaviour before this test
// existed), never make one reversed while this terminal's own delivery says
// competing paid.
func (p *payoff) note(own, group float64) {
	if !(own >= 0) {
		own = 0
	}
	if !(group >= 0) {
		group = own
	}
	ref := min(own, group)
	p.last = max(own, group)
	if p.smooth == 0 {
		p.smooth = ref
		return
	}
	p.smooth += paySmooth * (ref - p.smooth)
}

// trusted reports whether the elasticity test may give a verdict at now:
// not within the hold-off after a reversal.
func (p *payoff) trusted(now time.Time) bool {
	return p.distrust.IsZero() || !now.Before(p.distrust)
}

// verdict starts judging the off period that begins at now: rtt is the
// group's RTT (R̄ + d, s) at the verdict.
func (p *payoff) verdict(now time.Time, rtt float64) {
	p.at, p.rate, p.rtt, p.sum, p.count = now, p.smooth, rtt, 0, 0
}

// settle is how long after the verdict its outcome is first judged:
// two round trips at the verdict's RTT, and at least offAfter.
func (p *payoff) settle(offAfter time.Duration) time.Duration {
	return max(offAfter, seconds(2*p.rtt))
}

// judge judges the off period at an evaluation (rtt as in verdict; offAfter
// CoopParams.OffAfter). It returns a reason when competing has not paid and
// coop must cooperate again now, with hold-off the time no verdict is taken
// from then (OffFor, doubling with each reversal in a row, up to 8 ×).
func (p *payoff) judge(now time.Time, rtt float64, offAfter, offFor time.Duration) string {
	if p.at.IsZero() || !(p.rate > 0) || !(p.rtt > 0) {
		return ""
	}
	if now.Sub(p.at) < p.settle(offAfter) {
		return ""
	}
	p.sum += p.last
	p.count++
	mean := p.sum / float64(p.count)
	if p.count < payCount || rtt < PayRTT*p.rtt || mean >= PayLoss*p.rate {
		return ""
	}
	if p.holdoff == 0 || p.reversals == 0 {
		p.holdoff = offFor
	} else {
		p.holdoff = min(2*p.holdoff, 8*offFor)
	}
	p.reversals++
	p.distrust = now.Add(p.holdoff)
	p.drain = InelasticCut * p.rate
	why := fmt.Sprintf("coop: cooperating again after %v of competing that did not pay: %.0f B/s on average, the higher of this terminal's and the group's delivery per terminal, against %.0f B/s, the lower when it cooperated; the group's RTT %v against %v (the queue was the group's own, e.g. rate adaptation slowing a medium the group overloads); no switch-off for %v",
		now.Sub(p.at).Round(100*time.Millisecond), mean, p.rate, seconds(rtt).Round(time.Millisecond), seconds(p.rtt).Round(time.Millisecond), p.holdoff)
	p.at = time.Time{}
	return why
}

// back starts judging the return a reversal made at now (returned): d and
// rtt are the group's queue and RTT (s) then, until the end of the off
// period the reversal cut short.
func (p *payoff) back(now time.Time, d, rtt float64, until time.Time) {
	p.backAt, p.backFrom, p.backD, p.backRTT, p.backUntil = now, time.Time{}, d, rtt, until
}

// returned judges the return a reversal made (back) at an evaluation: d and
// dStar are the group's queue and its target (s), together whether most of
// the group is under bounds (then its windows can drain a queue of its
// own). A reversal is a judgment too, and it can be wrong the other way:
// beside hosts without coopcc under rate adaptation the hosts' queue grows
// and every station's delivery falls whether coop competes or not, so
// competing "did not pay" — and cooperating again left the terminals at a
// few segments against seconds of the hosts' queue, at a tenth of what
// they got competing (lab, papers/000's coexistence at N = 6 and 8 under
// testbed2012, 2026-11-27: after 8 of 30 off periods were reversed the
// group's queue rose from 2–5 s to 3–9 s in the seconds after, and the
// returned terminals stalled for the rest of the run). Where the queue
// was the group's own, it drains once the group is back under bounds:
// all-coop groups under the same profile (N = 8 and 10) fell from 1.0 s
// to 0.1–0.4 s within 2 s of their return. So once most of the group
// has been back for max(offAfter, two round trips at the reversal's RTT)
// and the queue has not fallen by a fifth (InelasticQueue, the
// elasticity test's grain) from what it was at the reversal, the return
// did not pay either. (Asking it to halve sent an all-coop group under
// ARF back to competing on a queue that fell by 40 %, 814 → 490 ms; beside
// hosts it had risen at every judgment, to 1.2–4.2 × — same lab, same
// day.) returned
// gives the reason and the end of the off period to resume — the rest of
// the one reversed, extended by the time the return took. Neither way
// paid, and competing is what doing nothing gives. The next reversal
// starts from OffFor again, and the resumed off period is not judged
// (this one's experiment is done). A queue at the target (or the
// hold-off ending) ends the judgment early with the return standing.
// A return most of the group does not join cannot be judged by its queue
// (peers: a peer that competes on keeps it, whatever this terminal's
// windows do), and it left the terminal at a few segments for as long as
// the hold-off ran: beside 3 CUBIC hosts under ARF (lab, papers/004's
// coexistence-2012, N = 5, k = 2, 2026-11-28) one coop terminal reversed
// 3.5–4 s into its off period while its one peer competed on, and carried
// 0.0–0.3 Mbit/s for 15–20 s, until that peer's statuses expired (2 runs
// of 3; the fifteenth session's N = 4 run waited until its hold-off
// ended). So when most peers still say they have no bound twice the
// judgment's wait after the reversal, the return did not pay either. Their
// latest statuses count, however late: in an all-coop group whose
// reversals come seconds apart a peer's "under bounds" that waited in the
// AP's queue still says it came back.
// The resumed off period settles (settle: the group's majority return,
// compete.rejoin) over two round trips at rtt, the group's RTT (s) now, not
// at the verdict: beside 4 CUBIC hosts under ARF (device machine,
// papers/000's coexistence at N = 8, k = 4, 2026-11-27) four coop terminals
// competed again together at an RTT of 2.4 s and all four were back under
// bounds a second later, the settling time at the verdict's RTT of 0.5 s
// (which rule ended it that run's logs do not say; the reason now does,
// compete.rejoin); squeezed to 10–30 segments, they carried 0.27 Mbit/s
// each against the hosts' 1.27 for the rest of the run.
func (p *payoff) returned(now time.Time, d, dStar, rtt float64, peers peersBack, offAfter time.Duration) (time.Time, string) {
	if p.backAt.IsZero() {
		return time.Time{}, ""
	}
	if d <= dStar || p.trusted(now) {
		p.backAt = time.Time{}
		return time.Time{}, ""
	}
	wait := max(offAfter, seconds(2*p.backRTT))
	if !peers.together() {
		if !peers.apart() || now.Sub(p.backAt) < 2*wait {
			return time.Time{}, ""
		}
		return p.again(now, rtt, fmt.Sprintf("the group did not come back with it — %d of %d peers still report no bound %v after the reversal (a peer that competes on keeps the queue, whatever this terminal's windows do)",
			peers.peers-peers.bounded, peers.peers, now.Sub(p.backAt).Round(100*time.Millisecond)))
	}
	if p.backFrom.IsZero() {
		p.backFrom = now
	}
	if now.Sub(p.backFrom) < wait {
		return time.Time{}, ""
	}
	if d <= InelasticQueue*p.backD {
		p.backAt = time.Time{} // it followed the group back: the return stands
		return time.Time{}, ""
	}
	return p.again(now, rtt, fmt.Sprintf("the group's queue %v after %v back under bounds, against %v at the reversal (not a fifth lower: the queue is not the group's, e.g. hosts without coopcc that rate adaptation slows with everyone)",
		seconds(d).Round(time.Millisecond), now.Sub(p.backFrom).Round(100*time.Millisecond), seconds(p.backD).Round(time.Millisecond)))
}

// again ends the judgment of a return that did not pay (returned) at now,
// rtt the group's RTT (s), and gives the end of the off period to resume
// and its reason, why the return did not pay.
func (p *payoff) again(now time.Time, rtt float64, why string) (time.Time, string) {
	until := p.backUntil.Add(now.Sub(p.backAt))
	p.backAt, p.distrust, p.drain, p.reversals, p.at = time.Time{}, time.Time{}, 0, 0, time.Time{}
	p.rtt = rtt
	return until, fmt.Sprintf("coop: competing again (no upper bound) until %s: cooperating after the reversal did not pay either — %s", until.Format(time.RFC3339), why)
}

// peersBack is how many of a group's peers are back under bounds after a
// reversal (returned): heard by a status sent within PeerFresh, bounded by
// their latest statuses, whatever their age, of peers in all.
type peersBack struct{ heard, bounded, peers int }

// together reports whether most of the group is under bounds by fresh
// statuses (or no peer is heard): its windows can then drain a queue of
// its own.
func (b peersBack) together() bool { return 2*b.heard >= b.peers }

// apart reports whether most of the group's peers say, by their latest
// statuses, that they have no bound: they compete on.
func (b peersBack) apart() bool { return 2*b.bounded < b.peers }

// hold is the least capacity estimate (B/s) at an evaluation with the
// group's queue d and target d* (s) and n terminals: after a reversal,
// until the queue is first back at the target (or the hold-off is over), InelasticCut of what
// the group delivered when it cooperated — the windows then drain the
// group's own queue of seconds without the control law cutting the
// estimate by half every evaluation on the way down, as it does far above
// the target (testbed2012 in the lab, 2026-11-27: from 1.1 MB/s to 108 kB/s
// in five evaluations while a queue of 4 s drained, and 10 s of a fifth of
// the medium's rate to ramp back). 0 = none.
func (p *payoff) hold(now time.Time, d, dStar, n float64) float64 {
	if p.drain > 0 && (d <= dStar || p.trusted(now)) {
		p.drain = 0
	}
	return p.drain * n
}

// ended records that an off period ran its course (it was not reversed):
// competing paid, and the next reversal's hold-off starts from OffFor.
func (p *payoff) ended() {
	if !p.at.IsZero() {
		p.reversals = 0
	}
	p.at = time.Time{}
}

package policy

import (
	"fmt"
	"math"
)

// The split probe: which share of the capacity is the group's own, learned
// as the queue is (docs/policies.md, coop step 5).
//
// coop shares its capacity estimate among the group's terminals by weighted
// max-min (terminalShare). Equal weights (equal rates) are what a wired
// bottleneck gives TCP flows, and what plain CUBIC gets where the wire, not
// the air, binds. Where the air binds on a medium that aggregates (802.11n/ac
// A-MPDU), DCF hands every station the same share of the accesses, and each
// access carries what the station's rate fits into one PPDU (accessWeight):
// there plain CUBIC's split follows those weights, and equal rates hold the
// fast terminals to the slow one's pace (the 802.11 performance anomaly). In
// the lab (heterogeneous, 802.11ac, two 433 Mbit/s phones, a 150 and a
// 65 Mbit/s tablet, 1 Gbit/s wired; this VM, forty-first session, 20 s, the
// queue probe off) a fixed 32 segments per contender carried 106.51 Mbit/s
// (101.80–109.22, 3 runs) at equal rates and 137.96 (137.58–138.70) at the
// per-access split, where plain CUBIC carries 120–130 at ten times the RTT;
// the 65 Mbit/s tablet got 18.2–18.6 there, what CUBIC gives it. At
// 100 Mbit/s wired the per-access split carried 7–8 % more (8 segments:
// 71.05 against 66.54, 2 runs each; 32: 83.92 against 77.74, 1 and 2) but
// left that tablet 9.8–11.3 Mbit/s, where equal rates gave it 15.6–19.2 and plain
// CUBIC, whose deep queues fill the wire there, 27.4. Which binds is not
// known to a terminal, so the group's probe leader measures it: once the
// group has learned that the medium pays for queue (more than the
// delayed-ACK pair per contender: it aggregates), and where the group's
// terminals' per-access weights differ (their PHY rates are known and some
// fits fewer frames into a PPDU), it makes one split probe per group size —
// an epoch's first half at the other split, judged as an up-probe (a gain
// of UpGain by ProbeSureZ standard errors at once, or by 2 and then against
// the epoch's tail too; judgeAgainstTail) — and announces the split it
// learned (peer TLV 20) with its learned queue. A group of a new size starts
// at equal rates again.
//
// The gain it must show is the group's proportionally fair one (Kelly: the
// sum of the logarithms of the terminals' rates, their geometric mean), not
// its sum's: a split that moves rate from a slow terminal to fast ones must
// pay for the inequality it makes. With the shares sized by the weights w
// (terminalShare), the geometric mean of the rates at the per-access split
// over that at equal rates is the ratio of the group's deliveries divided by
// the weights' arithmetic over their geometric mean (splitSkew): the probe's
// samples are divided by it (splitFair). For papers/003's four terminals
// that is 1.049, so the split needs × 1.10 of the sum: the 1 Gbit/s case
// gives × 1.29, the 100 Mbit/s case × 1.07–1.08. With the probe (60 s runs,
// the same VM and session) the group carried 123.63 Mbit/s at 1 Gbit/s
// wired (5 runs) against 100.47 for the code before and plain CUBIC's
// 130.43 at 18 × the p95 RTT, and at 100 Mbit/s the probe was rejected.

// splitDiffers reports whether the group's terms would share differently
// per access than at equal rates: every terminal's PHY rate is known, some
// access weights differ, and no split is configured (the weights an
// operator chose — capabilities, PHY rates, per access — are not probed).
func splitDiffers(cp CoopParams, terms []terminal) bool {
	if cp.WeightByCapability || cp.WeightByLinkRate || cp.WeightByAccess || len(terms) < 2 {
		return false
	}
	var first float64
	differ := false
	for i, t := range terms {
		if !(t.link > 0) {
			return false
		}
		w := accessWeight(t.link, cp.AccessFrames)
		if i == 0 {
			first = w
		}
		differ = differ || w != first
	}
	return differ
}

// withSplit returns cp with the per-access split turned on where access
// says so (the group's learned split, or a split probe's).
func withSplit(cp CoopParams, access bool) CoopParams {
	if access {
		cp.WeightByAccess = true
	}
	return cp
}

// accessNow reports whether the windows share per access now: the
// leader's split in force for a follower, else the learned split, the
// other one while a split probe is open.
func (q *queueProbe) accessNow() bool {
	if q.following {
		return q.leadAccess
	}
	return q.access != (q.split && q.open())
}

// splitDue reports whether this epoch's probe should be the split probe:
// the group's split is worth probing (splits: splitDiffers, and this
// terminal leads), it is equal rates (a split probe goes one way, from
// equal rates to per access: a terminal that took the lead from a leader
// that left keeps the split it learned from it until the group's size
// changes) and has not been probed at this group size, the medium
// has paid for queue (paidForQueue: it aggregates) and no queue probe is
// being pooled (choose also lets a chained step that was not sure go on
// first). It comes before the next up-step: in the lab (heterogeneous,
// 802.11ac, 1 Gbit/s wired, forty-first session, the probe off) the
// per-access split at 8 segments per contender carried 114.90 Mbit/s
// (2 runs) against equal rates' 95.60 at 8 and 106.51 at 32.
func (q *queueProbe) splitDue(cp CoopParams) bool {
	return q.splits && !q.access && !q.splitTried && paidForQueue(cp, q.learned(cp)) && q.pool.arms == 0
}

// probeTo is the segments per contender this epoch's probe puts in force:
// the learned value for a split probe.
func (q *queueProbe) probeTo(cp CoopParams) float64 {
	if q.split {
		return q.learned(cp)
	}
	return q.probeValue(cp, q.dir)
}

// note says what this epoch's probe from → to measured against an arm
// (probeNote), naming the split for a split probe.
func (q *queueProbe) note(from, to float64, c armComparison, z float64, of string) string {
	if !q.split {
		return probeNote(from, to, c, z, of)
	}
	return fmt.Sprintf("split probe %s → %s at %.0f segments per contender: delivery over the skew %.3f ×%.3f (±%.3f)%s", splitName(q.access), splitName(!q.access), from, q.skew, c.ratio, z*c.se/c.against, of)
}

func splitName(access bool) string {
	if access {
		return "per access"
	}
	return "equal rates"
}

// adoptSplit makes the split probe's split the learned one: the working
// point moved, so an up-probe from it needs no evidence and comes next.
func (q *queueProbe) adoptSplit() {
	q.access, q.splitTried = !q.access, true
	q.next, q.backoff, q.triedUp, q.triedBelow, q.moved = 1, 0, false, false, true
}

// rejectSplit keeps the learned split; the queue probe's schedule is the
// one it had. The windows step back now, to the same queue per contender:
// the epoch's tail is the next one's baseline as after an adopted probe (a
// rejected queue probe's is not: settled). In the lab (heterogeneous,
// 100 Mbit/s wired, forty-first session) a split probe rejected without a
// baseline after it held the group's next up-step 8 → 32 back by two epochs.
func (q *queueProbe) rejectSplit() {
	q.splitTried = true
}

// splitSkew is the per-access split's cost to the group's proportional
// fairness: the arithmetic mean of the terms' per-access weights
// (accessWeight) over their geometric mean, ≥ 1; and whether the split is
// worth probing at all (splitDiffers: where it is not, the skew is 1).
func splitSkew(cp CoopParams, terms []terminal) (skew float64, differs bool) {
	if !splitDiffers(cp, terms) {
		return 1, false
	}
	var sum, logs float64
	for _, t := range terms {
		w := accessWeight(t.link, cp.AccessFrames)
		sum += w
		logs += math.Log(w)
	}
	n := float64(len(terms))
	return (sum / n) / math.Exp(logs/n), true
}

// splitFair is a probe's sample of the group's delivery d (B/s) as the
// split probe judges it: over the skew (splitSkew) while its per-access
// split is in force, so that it compares the group's proportionally fair
// utility with the baseline's at equal rates (splitDue: the learned split
// is equal rates); d for any other probe.
func (q *queueProbe) splitFair(d float64) float64 {
	if q.split && q.accessNow() && q.skew > 1 {
		return d / q.skew
	}
	return d
}

package policy

import (
	"fmt"
	"math"
	"net/netip"
	"strings"
	"time"
)

// The phases of one coop evaluation (Decide), each a pure function of what
// the evaluation measured and the controller's state, so each can be tested
// alone: formGroup (who shares, and the group's delay), targetQueue (d*),
// nextCapacity (the control law), terminalShare (max-min by demand) and
// flowBounds (rates to windows).

// terminal is one member of the sharing group as coop sees it.
type terminal struct {
	base, queue time.Duration
	rate        float64
	// rateSampled: rate includes a kernel's one-ACK sample (this terminal
	// only; FlowView.RateSampled).
	rateSampled bool
	appLimited  bool
	capability  float64
	// use is the terminal's windows over their upper bounds (cwnd / hi,
	// summed over its bulk flows); 0 = unknown (no bound, no cwnd).
	use float64
	// cwnd is the sum of its bulk flows' windows, segments (0 = unknown).
	cwnd float64
	// link is the PHY rate its WLAN interface transmits at, Mbit/s (0 =
	// unknown).
	link float64
	// bounded: the terminal's windows have an upper bound in force (a
	// peer's status reports one; this terminal, while it evaluates, is).
	bounded bool
	// underTarget: a peer under bounds whose status reports a lower bound
	// too, which coop sets only while the queue is under the terminal's
	// target (flowBounds): that peer is not cutting its windows.
	underTarget bool
	// sent is when a peer sent the status it is known by, in this
	// terminal's clock (PeerView.Sent; zero = unknown).
	sent time.Time
}

// windowCappedRate is the terminal's delivery rate (B/s), at most what its
// windows carry at its RTT (cwnd·MSS/(base + queue), where both are known):
// the AP hands ACKs back in bursts, and one evaluation's delivery can be
// three times what the windows carry (lab: 2.36 MB/s in an evaluation of a
// terminal whose windows carried 0.8). Not group.carried, which reads the
// windows the other way (a slow start's delivery lagging them).
func (t terminal) windowCappedRate(mss float64) float64 {
	if rtt := (t.base + t.queue).Seconds(); t.cwnd > 0 && rtt > 0 {
		return min(t.rate, t.cwnd*mss/rtt)
	}
	return t.rate
}

// group is what one evaluation knows of the sharing group: its terminals
// (self first) and their delay statistics, in seconds (float: no overflow on
// huge inputs).
type group struct {
	terms    []terminal
	peers    int
	rbar     float64       // R̄: mean base RTT of the terminals that know one
	d        float64       // median queueing delay over those terminals
	minBase  time.Duration // the smallest base RTT reported
	measured float64       // Σ delivery rates, B/s
	// slack: most terminals whose window use is known keep their windows
	// under SlackUse × their bounds — the bounds do not shape the delivery.
	slack bool
	// medium: the PHY rates the group transmits at (medium.go).
	medium medium
	// air: the group's share of the air it shares (coop_air.go).
	air air
	// window is the sum of the terminals' windows, segments; 0 when a
	// terminal's is unknown.
	window float64
	// boundWindow is the same sum over the terminals under bounds: this
	// terminal and the peers that report an upper bound (0 when one of
	// theirs is unknown). A peer in competitive mode is not counted: its
	// CUBIC grows on its own.
	boundWindow float64
	// drained: the group's queue was at or above its target at the
	// evaluation before (coop.lastQueue), so a queue near 0 now was emptied
	// by a cut, and the delivery since includes what it held.
	drained bool
}

// SlackUse is the window use (cwnd over the upper bound) under which a
// terminal's bound does not limit it.
const SlackUse = 0.8

func (g group) n() float64 { return float64(len(g.terms)) }

func (g group) ratio() float64 { return (g.rbar + g.d) / g.rbar }

// idle reports whether the group's bottleneck is idle against the target
// queue dStar (s): a queue of a quarter of it or less.
func (g group) idle(dStar float64) bool { return g.d <= dStar/4 }

// boundedPeers counts the peers whose windows have an upper bound in force.
func (g group) boundedPeers() int { return g.boundedPeersSince(time.Time{}) }

// boundedPeersSince counts the peers whose windows have an upper bound in
// force by a status sent at or after t (freshBoundedPeers).
func (g group) boundedPeersSince(t time.Time) int { return len(g.freshBoundedPeers(t)) }

// freshBoundedPeers is the peers whose windows have an upper bound in force
// by a status sent at or after t (a peer whose send time is unknown
// counts).
func (g group) freshBoundedPeers(t time.Time) []terminal {
	var out []terminal
	for _, p := range g.terms[1:] {
		if p.bounded && (p.sent.IsZero() || !p.sent.Before(t)) {
			out = append(out, p)
		}
	}
	return out
}

// peersUnderTarget counts the peers under bounds by a status sent at or
// after t (freshBoundedPeers) that report their queue under their target
// (underTarget). Where this terminal's queue is above its own
// target, such a peer disagrees about the target — its up-probe raised its
// own, or their learned queues differ — and does not cut its windows, so a
// cut of this terminal's is not the group's. An older status does not
// count: behind a queue of hosts without coopcc a peer's statuses wait in
// the AP's queue or are lost, and its last one may be from a moment at its
// target.
func (g group) peersUnderTarget(t time.Time) (under int) {
	for _, p := range g.freshBoundedPeers(t) {
		if p.underTarget {
			under++
		}
	}
	return under
}

// selfTerminal is this terminal as a member of the group: smallest base RTT,
// median queueing delay of its destinations, summed rate. Per destination
// the SRTT is that of the network-limited flows (an idle connection's SRTT
// is stale: see groupByDst) but the min RTT is the smallest of all flows on
// that path: a data connection's first RTT samples come from its own
// slow-start bursts (15.7 ms on a 4 ms path in the testbed) while the idle
// control connection measured the empty path at setup.
func selfTerminal(gs []dstGroup, capability float64) terminal {
	self := terminal{capability: capability, appLimited: true}
	var qs []time.Duration
	for _, g := range gs {
		if g.MinRTT > 0 && (self.base == 0 || g.MinRTT < self.base) {
			self.base = g.MinRTT
		}
		if g.MinRTT > 0 {
			qs = append(qs, max(g.SRTT-g.MinRTT, 0))
		}
		self.rate += g.Rate
		self.rateSampled = self.rateSampled || g.RateSampled
		if g.Bulk > 0 {
			self.appLimited = false
		}
	}
	self.queue = median(qs)
	return self
}

// peerTerminals are the peers with active flows. No peer heard is a group of
// one: nothing to share, but the same law bounds this terminal's own queue
// (a single laptop on a bloated AP should get low latency too).
func peerTerminals(pvs []PeerView) []terminal {
	var out []terminal
	for _, pv := range pvs {
		if pv.ActiveFlows <= 0 {
			continue
		}
		t := terminal{base: max(pv.MinRTT, 0), rate: finiteOr0(pv.DeliveryRate), appLimited: pv.AppLimited, capability: finiteOr0(pv.Capability), link: finiteOr0(pv.LinkRate), bounded: pv.Hi > 0, underTarget: pv.Hi > 0 && pv.Lo > 0, cwnd: float64(pv.Cwnd), sent: pv.Sent}
		if pv.Hi > 0 && pv.Cwnd > 0 && pv.ActiveFlows > 0 {
			t.use = float64(pv.Cwnd) / (float64(pv.Hi) * float64(pv.ActiveFlows))
		}
		if pv.MinRTT > 0 && pv.SRTT > pv.MinRTT {
			t.queue = pv.SRTT - pv.MinRTT
		}
		out = append(out, t)
	}
	return out
}

// formGroup forms the group and its delay statistics: R̄ the mean base RTT,
// d the median queueing delay (all uploads queue behind the same AP, so d is
// common; the median ignores one terminal with a local queue of its own).
// ok is false while no terminal knows its base RTT.
//
// A terminal whose connections opened while the medium was already loaded
// never saw the empty path: its min RTT holds the queue of that moment (18–
// 83 ms on a 4.5 ms path in the lab), and taken as its base it would size its
// windows for tens of milliseconds and keep the group's queue from draining.
// Its SRTT still holds the group's queue d like everyone's, so a terminal
// whose apparent queue is under half of d gets SRTT − d as its base
// (latecomerBase), never below the group's smallest base.
func formGroup(self terminal, peers []terminal) (g group, ok bool) {
	g.terms = append([]terminal{self}, peers...)
	g.peers = len(peers)
	var queues []time.Duration
	known, slack := 0, 0
	for _, t := range g.terms {
		g.measured += t.rate
		if t.use > 0 {
			known++
			if t.use < SlackUse {
				slack++
			}
		}
		if t.base > 0 {
			queues = append(queues, t.queue)
			if g.minBase == 0 || t.base < g.minBase {
				g.minBase = t.base
			}
		}
	}
	g.slack = 2*slack > known
	g.medium = mediumOf(g.terms)
	g.window = groupWindow(g.terms)
	g.boundWindow = groupWindow(underBounds(g.terms))
	if len(queues) == 0 {
		return g, false
	}
	d := median(queues)
	g.d = d.Seconds()
	var sumBase float64
	for i, t := range g.terms {
		if t.base <= 0 {
			continue
		}
		if b := latecomerBase(t.base, t.base+t.queue, d, g.minBase); b < t.base {
			g.terms[i].base, g.terms[i].queue = b, t.base+t.queue-b
		}
		sumBase += g.terms[i].base.Seconds()
	}
	g.rbar = sumBase / float64(len(queues))
	return g, true
}

// SlowStartLag is how far, at most, the delivery an evaluation measures can
// lag what a terminal's windows carry: the bytes acknowledged over a tick
// were sent a round trip earlier, and a slow start doubles its window every
// round trip (two doublings in a 0.5 s tick at 256 ms, three in a 1 s round
// trip's lag and tick). A window worth more than this many times its
// terminal's delivery is not one the delivery will follow (a window the
// application does not fill).
const SlowStartLag = 4

// SlowStartGrowth is how much the group's delivery must have grown since the
// evaluation before for it to be a slow start's: CUBIC's congestion
// avoidance grows a window by a segment or less per round trip, and once the
// medium is busy the delivery grows only with its share.
const SlowStartGrowth = 1.5

// SlowStartRounds is how many base round trips an evaluation interval may
// span for its delivery to lag a slow start: over more, the slow start grew
// more than 2^SlowStartRounds-fold within the interval and has filled the
// medium by its end, so what it delivered is the medium's rate. Ten coop
// terminals at 4 ms (125 round trips in 0.5 s) measured 1.03–1.26 × less
// than their windows carried at a 200 ms start-up queue — the queue, not a
// lag — and an estimate from the windows drained it more slowly (p95 123 and
// 132 ms in two 25 s runs, one of them marked invalid, against 63–68; lab,
// 2026-11-27).
const SlowStartRounds = 8

// firstEstimate is the capacity's first measurement, at the group's first
// inflation (last: the group's delivery at the evaluation before, 0 = none;
// every: the evaluation interval): the group's delivery, or, while that
// delivery still grows as a slow start's does over an interval of a few
// round trips, what its windows carry (carried).
func firstEstimate(g group, last, mss float64, every time.Duration) float64 {
	lags := g.rbar*SlowStartRounds >= every.Seconds()
	if lags && last > 0 && g.measured >= SlowStartGrowth*last {
		return g.carried(mss)
	}
	return g.measured
}

// carried is what the group's windows carry at their round trips now, B/s:
// each terminal's window over its smoothed RTT (Little's law: a saturated
// path delivers what is in flight per round trip), never less than the
// terminal delivered, nor more than SlowStartLag × that. An app-limited
// terminal, or one whose window or RTT is unknown, counts with its delivery.
// The group's first inflation comes in a slow start, where the delivery
// between evaluations lags the windows (firstEstimate): in the lab
// (coexistence, 256 ms) two coop terminals' windows of 160 segments at
// 326 ms carried 1.42 MB/s where the tick's delivery said 511 kB/s, and an
// estimate from the delivery cut them to 58–71 segments while the CUBIC
// hosts' windows grew past 300. Beyond the first estimate the delivery is
// the measure (its windows then grow no faster than the bounds let them).
func (g group) carried(mss float64) float64 {
	var sum float64
	for _, t := range g.terms {
		r := t.rate
		if rtt := (t.base + t.queue).Seconds(); !t.appLimited && t.cwnd > 0 && rtt > 0 {
			r = max(r, min(t.cwnd*mss/rtt, SlowStartLag*t.rate))
		}
		sum += r
	}
	return sum
}

// groupWindow is the sum of the terminals' windows (segments), or 0 when
// one of them is unknown (a peer that reports none).
func groupWindow(terms []terminal) float64 {
	var w float64
	for _, t := range terms {
		if t.cwnd <= 0 {
			return 0
		}
		w += t.cwnd
	}
	return w
}

// underBounds is the terminals whose windows have an upper bound in force:
// the first (this terminal, which bounds its windows while it evaluates)
// and the peers that report one.
func underBounds(terms []terminal) []terminal {
	var out []terminal
	for i, t := range terms {
		if i == 0 || t.bounded {
			out = append(out, t)
		}
	}
	return out
}

// latecomerBase is the base RTT of a path with min RTT base and smoothed RTT
// srtt in a group whose shared queue is d: base itself, unless the path's
// apparent queue srtt − base is under d/2 (its min RTT holds a queue), then
// srtt − d, but not below floor (the group's smallest base).
func latecomerBase(base, srtt, d, floor time.Duration) time.Duration {
	if d <= 0 || srtt-base >= d/2 {
		return base
	}
	return min(base, max(srtt-d, floor))
}

// targetQueue is the target queueing delay d* = max((ρ*−1)·R̄,
// segs·MSS·(n+½)/C), seconds: the relative target, but never less than the
// time the bottleneck needs to serve segs segments for every contender of
// the medium — the n terminals, and the AP for half of that: it forwards
// one ACK frame per delayed-ACK pair that a station queues — at the
// capacity the windows are sized for. segs is QueueSegments (2: one
// delayed-ACK pair) unless the queue probe found that more queue pays
// (aggregation: coop_probe.go) or that less does (below). On short paths
// (4 ms: d* by ratio alone is under 1 ms, less than one 802.11 contention
// round of a few stations plus a delayed ACK) the relative target cannot be
// met even with no queue of ours, and "inflated" would never clear; one
// station alone needs 12 segments at 4 ms where 2 segments over its BDP
// (10–11) lost throughput. With the same C in the windows, this floor is
// exactly segs·(n+½) extra segments in all. capacity 0: no floor.
//
// The AP counted as a whole contender until the thirty-second session: a
// lone 4 ms terminal's window was 13, whose p95 RTT (6.7–7.0 ms) missed 1.5 ×
// its 4.3 ms base, where a fixed 12 carried as much at 6.1 (lab,
// testbed2012; docs/policies.md, Limits).
//
// Below QueueSegments (the queue probe's down-probes, where less queue
// measurably paid: rate adaptation that reads the collisions of backlogged
// stations as a bad channel) the whole target shrinks with segs: the
// relative term too, by segs/QueueSegments — on a long path it is what sets
// the queue, and the medium that paid for fewer segments per contender pays
// for less queue whichever term holds it.
func targetQueue(cp CoopParams, g group, mss, capacity, segs float64) float64 {
	dq := (cp.TargetRatio - 1) * g.rbar * min(1, segs/float64(max(cp.QueueSegments, 1)))
	if capacity > 0 {
		dq = max(dq, segs*mss*(g.n()+0.5)/capacity)
	}
	return dq
}

// nextCapacity is one step of the control law from the estimate c (> 0):
// g = ((R̄+d*)/(R̄+d))^k = (ρ_t/ρ)^k, clamped, applied to max(C, measured) —
// what the terminals deliver is proof of capacity. Above the target the
// bottleneck is busy and delivers C₀ < C, so C·g: the error shrinks by (1−k)
// per tick, monotonically. Below the target with the bottleneck still busy
// the sum is C₀ itself (C₀·g: at most a k-sized overshoot); with an idle
// bottleneck it is C·(R̄+d*)/R̄ (a ×ρ_t·g probe per tick). It also lets the
// estimate rise while the RTT is inflated when the delivery rate grows
// (windows rounded up, a path that got faster) — unless lift is false:
// while the elasticity test runs far above the target, windows still under
// their bounds raise the delivery, and lifting the estimate to it would undo
// the cut the test waits for (evaluate). hold is the least estimate the
// elasticity test allows (compete.hold). It returns the new estimate and the
// gain applied.
func nextCapacity(cp CoopParams, g group, c, dStar, mss, hold float64, lift bool) (float64, float64) {
	gain := min(max(math.Pow((g.rbar+dStar)/(g.rbar+g.d), cp.Gain), cp.GainMin), cp.GainMax)
	if g.slack {
		// Most windows are under their bounds (the kernel's CUBIC regrowing
		// after a loss or its start): the delivery is not what the bounds
		// allow, and a short queue then says nothing about the medium. The
		// estimate holds instead of rising to the probe cap, so the windows
		// do not find bounds 1.44 × above what the medium carried when they
		// grow into them (testbed2012: that overshoot set off ARF's collapse).
		gain = min(gain, 1)
	} else if g.idle(dStar) && g.measured > c && !g.drained {
		// The bottleneck is idle (a quarter of the target queue or less,
		// and the windows deliver more than the estimate: at an idle
		// bottleneck they carry C·(R̄+d*)/R̄): nothing to overshoot yet,
		// probe at GainMax. That is ×1.56 per tick, against ×1.4 by the law
		// alone (6 s to ramp from a slow-start estimate at 256 ms in the
		// testbed). A short queue with the delivery at or under the estimate
		// is windows that have not grown into their bounds yet, not an idle
		// medium: there GainMax had taken ten terminals at 256 ms from an
		// estimate already at the medium's 3.0 MB/s to 3.8 and the queue to
		// 1.38 × the base RTT (lab, 2026-11-26; alone, 1.4 ×). Nor is a
		// queue that a cut emptied since the evaluation before (drained):
		// the delivery then includes what the queue held — four coop
		// terminals at 256 ms whose windows went to the target on their own
		// air (coop.windowQueue) drained 142 ms of queue in a tick, delivered
		// 3.23 MB/s on a medium that carries 3.0, and GainMax on that took
		// the estimate to 4.04 and the queue back to 96 ms a second later
		// (lab, scalability --quick, twenty-fifth session).
		gain = cp.GainMax
	} else if math.Abs(g.d-dStar) < quantum(mss, c) {
		// Within half a segment of the target: no window can come closer
		// (windows are whole segments), and moving the estimate only
		// dithers the windows about it (gain and lift alike: the delivery's
		// scatter would ratchet the estimate up). A lone terminal at 4 ms
		// whose target lay between two windows alternated between 12 and 13
		// every 2–3 s (lab, testbed2012, thirty-first session: p95 RTT
		// 6.6–6.8 ms); held, it stays at the one nearest the target.
		gain, lift = 1, false
	}
	if lift {
		c = max(c, g.measured)
	}
	c *= gain
	if g.measured > 0 {
		c = min(c, cp.ProbeCap*g.measured)
		if g.d >= dStar {
			c = min(c, cp.BusyCap*g.measured)
		}
	}
	// Only a guard against 0: a low C raises d* (QueueSegments per terminal
	// at C), so the queue counts as below target and C grows. While the
	// elasticity test runs, one cut is the probe (compete.hold).
	return max(c, g.n()*mss, hold), gain
}

// quantum is half a segment's queueing time at the estimate c (seconds):
// the deadband of the estimate's law about the target (nextCapacity).
func quantum(mss, c float64) float64 { return 0.5 * mss / c }

// terminalShare is this terminal's share of the capacity by weighted max-min
// (equal weights, or capabilities, or PHY rates, or frames per access:
// CoopParams).
// The bound is a cap, not an allocation: this terminal (terms[0]) always
// counts as unlimited, so an app-limited flow of ours may still grow to its
// fair share; the peers count with their demands.
func terminalShare(cp CoopParams, terms []terminal, capacity float64) float64 {
	demands := make([]float64, len(terms))
	weights := make([]float64, len(terms))
	meanCap, nCap, nLink := 0.0, 0, 0
	for _, t := range terms {
		if t.capability > 0 {
			meanCap += t.capability
			nCap++
		}
		if t.link > 0 {
			nLink++
		}
	}
	rated := !cp.WeightByCapability && nLink == len(terms)
	airtime, access := cp.WeightByLinkRate && rated, cp.WeightByAccess && rated
	if nCap > 0 {
		meanCap /= float64(nCap)
	}
	for i, t := range terms {
		demands[i] = math.Inf(1)
		if i > 0 && t.appLimited {
			demands[i] = t.rate * (1 + cp.Headroom)
		}
		weights[i] = 1
		switch {
		case airtime:
			weights[i] = t.link
		case access:
			weights[i] = accessWeight(t.link, cp.AccessFrames)
		}
		if cp.WeightByCapability {
			switch {
			case t.capability > 0:
				weights[i] = t.capability
			case nCap > 0:
				weights[i] = meanCap
			}
		}
	}
	return MaxMinShares(capacity, demands, weights)[0]
}

// The longest PPDU of 802.11n/ac/ax (aPPDUMaxTime: 5.484 ms, the L-SIG
// length limit), and the frame an uploading terminal's A-MPDU carries: a
// full-size IP packet (its MAC header and delimiter change no weight).
const (
	accessPPDU       = 5484 * time.Microsecond
	accessFrameBytes = 1500
)

// MaxAccessFrames is the largest BlockAck window (802.11be): the most
// frames CoopParams.AccessFrames may say one access carries.
const MaxAccessFrames = 1024

// accessWeight is how many frames one access of DCF with aggregation
// carries at a PHY rate of rate Mbit/s: frames (the BlockAck window), or
// what the rate fits into the longest PPDU where that is fewer. Every
// station wins the same share of the accesses, so where the air binds
// each terminal's delivery is in proportion to it: with 64 frames the
// rates above 140 Mbit/s weigh the same and a 65 Mbit/s terminal 0.46 ×
// that. In the lab (heterogeneous, 802.11ac, 1 Gbit/s wired) plain CUBIC's
// split was 30.8 and 36.2 Mbit/s for the 433 Mbit/s phones, 37.8 for the
// 150 Mbit/s tablet and 19.3 for the 65 Mbit/s one (docs/results.md,
// thirty-sixth session).
func accessWeight(rate float64, frames uint32) float64 {
	return min(float64(frames), accessPPDU.Seconds()*rate*1e6/(8*accessFrameBytes))
}

// flowBounds splits the terminal's share over its own flows the same way
// (each flow's cap computed with its own demand unlimited, the other flows'
// app-limited demands as they are) and turns each flow's rate r into a
// window for the queueing delay q: hi = max(HiFloor, r·(R_f + q)/MSS), R_f
// the flow's own base RTT (R̄ if unknown; a latecomer's corrected as in
// formGroup), so flows with different wired delays get equal rates. lo =
// LoFraction·hi unless inflated, and at least r·R_f/MSS while the queue
// idles (g.d ≤ q/4; not inflated means no episode is open, so q = d*); a
// destination's lo is its bulk flows' (mergeBounds). A destination with
// downloads and no bulk upload (an idle control connection does not count)
// gets DownloadRoom × hi while not inflated (CoopParams). It returns the
// bounds and the rate targets per destination.
func flowBounds(cp CoopParams, flows []FlowView, share float64, g group, q float64, inflated bool, defMSS uint32) (map[netip.Addr]Bounds, map[netip.Addr]float64) {
	demands := make([]float64, len(flows))
	for i, f := range flows {
		demands[i] = math.Inf(1)
		if f.AppLimited {
			demands[i] = finiteOr0(f.DeliveryRate) * (1 + cp.Headroom)
		}
	}
	per := map[netip.Addr]Bounds{}
	bulkLo := map[netip.Addr]bool{} // the destination's lo comes from a bulk flow
	targets := map[netip.Addr]float64{}
	for i, f := range flows {
		saved := demands[i]
		demands[i] = math.Inf(1)
		r := MaxMinShares(share, demands, nil)[i]
		demands[i] = saved
		base := g.rbar
		if f.MinRTT > 0 {
			b := f.MinRTT
			if !f.AppLimited && f.SRTT > 0 {
				b = latecomerBase(f.MinRTT, f.SRTT, seconds(g.d), g.minBase)
			}
			base = b.Seconds()
		}
		mss := f.MSS
		if mss == 0 {
			mss = defMSS
		}
		// Rounded to the nearest segment: rounding down biased every window
		// low (2 terminals at 4 ms stuck at hi 2, 2.27 → 2); the estimate C
		// absorbs what is left of the rounding.
		hi := max(cp.HiFloor, toSegments(math.Round(r*(base+q)/float64(mss))))
		var lo uint32
		if !inflated {
			lo = toSegments(cp.LoFraction * float64(hi))
			if g.d <= q/4 {
				// The bottleneck idles (the same quarter of the target
				// nextCapacity ramps at): the window of the share
				// without a queue, so the flow follows the estimate up
				// instead of CUBIC's 5 % a round trip once a slow start
				// ended small (HyStart at the target queue, or a clamp).
				lo = max(lo, toSegments(r*base/float64(mss)))
			}
			lo = min(lo, hi)
		}
		per[f.Dst] = mergeBounds(per, bulkLo, f, Bounds{Lo: lo, Hi: hi})
		targets[f.Dst] = max(targets[f.Dst], r)
	}
	if !inflated {
		downloadRoom(cp.DownloadRoom, flows, per)
	}
	return per, targets
}

// mergeBounds folds flow f's bounds b into its destination's: the largest
// hi, and the smallest lo of the bulk flows — an app-limited flow (iperf3's
// idle control connection beside the data) never fills a floor, and its
// share, computed as if it were unlimited, is half the data flow's: taken in
// the minimum it halved the destination's lower bound. Only a destination
// with no bulk flow takes its lo from app-limited ones.
func mergeBounds(per map[netip.Addr]Bounds, bulkLo map[netip.Addr]bool, f FlowView, b Bounds) Bounds {
	old, seen := per[f.Dst]
	fromBulk := bulkLo[f.Dst]
	if !f.AppLimited {
		bulkLo[f.Dst] = true
	}
	switch {
	case !seen:
		return b
	case f.AppLimited && fromBulk:
		return Bounds{Lo: old.Lo, Hi: max(old.Hi, b.Hi)}
	case !f.AppLimited && !fromBulk:
		return Bounds{Lo: b.Lo, Hi: max(old.Hi, b.Hi)}
	}
	return Bounds{Lo: min(old.Lo, b.Lo), Hi: max(old.Hi, b.Hi)}
}

// downloadRoom multiplies the upper bound of every destination with
// downloads and no bulk upload (an idle connection beside a download, such
// as iperf3's control connection, does not count) by room.
func downloadRoom(room float64, flows []FlowView, per map[netip.Addr]Bounds) {
	downloads, uploads := map[netip.Addr]bool{}, map[netip.Addr]bool{}
	for _, f := range flows {
		switch {
		case f.Download:
			downloads[f.Dst] = true
		case !f.AppLimited:
			uploads[f.Dst] = true
		}
	}
	for dst := range downloads {
		if b := per[dst]; !uploads[dst] {
			per[dst] = Bounds{Lo: b.Lo, Hi: toSegments(math.Round(float64(b.Hi) * room))}
		}
	}
}

// boundsReason lists each destination's rate target and bounds.
func boundsReason(gs []dstGroup, per map[netip.Addr]Bounds, targets map[netip.Addr]float64) string {
	var parts []string
	for _, g := range gs {
		b := per[g.Dst]
		parts = append(parts, fmt.Sprintf("%s: %.0f B/s → hi %d lo %d", dstName(g.Dst), targets[g.Dst], b.Hi, b.Lo))
	}
	return strings.Join(parts, "; ")
}

package policy

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strings"
	"time"
)

// CoopParams configures the coop policy. All are dimensionless controller
// constants, not properties of an environment; the zero value of each field
// means its documented default.
type CoopParams struct {
	// TargetRatio ρ* is the aggregate RTT ratio the controller holds:
	// (base + queueing delay)/base. Default 1.15: on the 802.11g testbed
	// (10 terminals, 256 ms) fixed windows showed the aggregate flat above
	// a queue of 0.15 × base (20.6 Mbit/s at p95 1.16 × base, 20.7 at
	// 1.33 ×, 21.4 at 1.6 ×), and coop's p95 RTT sits about 0.1 × base above
	// its target (1.33 × at a target of 1.25, 1.23 × at 1.15, same
	// aggregate). docs/policies.md, "The physical limit".
	TargetRatio float64 `toml:"target_ratio" json:"target_ratio,omitempty"`
	// Gain k is the exponent of the control law g = (ρ*/ρ)^k. Default 0.5.
	Gain float64 `toml:"gain" json:"gain,omitempty"`
	// GainMin, GainMax clamp g per evaluation. Defaults 0.5 and 1.25.
	GainMin float64 `toml:"gain_min" json:"gain_min,omitempty"`
	GainMax float64 `toml:"gain_max" json:"gain_max,omitempty"`
	// LoFraction is the lower bound as a fraction of the upper bound while
	// the RTT is not inflated. Default 0.5.
	LoFraction float64 `toml:"lo_fraction" json:"lo_fraction,omitempty"`
	// HiFloor is the smallest upper bound ever set, segments. Default 2.
	HiFloor uint32 `toml:"hi_floor" json:"hi_floor,omitempty"`
	// QueueSegments is the queue the target allows per contender of the
	// medium until the queue probe learns better, segments: the target
	// queueing delay is at least the time the bottleneck takes to serve
	// that many segments for every terminal and for the AP.
	// Default 2, one delayed-ACK pair (RFC 5681: the receiver acknowledges
	// every second full segment, so a sender needs two segments beyond its
	// share of the path to never wait for an ACK). The probe goes below it
	// (to ProbeMinSegments, the whole target with it) only on a measured
	// gain (coop_probe.go).
	QueueSegments uint32 `toml:"queue_segments" json:"queue_segments,omitempty"`
	// Headroom is the extra rate granted to an application-limited flow or
	// terminal above what it uses now, so it can grow. Default 0.1 (10 %).
	Headroom float64 `toml:"headroom" json:"headroom,omitempty"`
	// ProbeCap caps the capacity estimate at ProbeCap × the measured sum of
	// delivery rates, so it cannot run away while the windows do not use
	// their bounds (low demand, cubic still growing below its cap). Default
	// TargetRatio × GainMax (1.4375): one tick's probe above what is
	// delivered. (With 2, in the testbed at 256 ms C ran to 1.75 × the
	// capacity while one terminal's cubic regrew, leaving the other's cap
	// loose: Jain 0.96 over 20 s.)
	ProbeCap float64 `toml:"probe_cap" json:"probe_cap,omitempty"`
	// BusyCap caps the estimate at BusyCap × the measured sum while the
	// group's RTT is inflated: the bottleneck is busy then, so what the
	// group delivers is the capacity. Without it an estimate above the
	// truth survives whenever one terminal cannot use its share for a
	// reason its window does not control (a download behind the AP's one
	// DCF share of the air: in the lab's mixed run C sat at 1.4 × measured
	// and the uploads took twice the downloads' rate). Default 1.1.
	BusyCap float64 `toml:"busy_cap" json:"busy_cap,omitempty"`
	// Capability is this terminal's throughput when alone, bytes/s (0 =
	// unknown); used only with WeightByCapability.
	Capability float64 `toml:"capability" json:"capability,omitempty"`
	// WeightByCapability shares capacity in proportion to each terminal's
	// capability (papers/003's weighted fairness) instead of equally.
	WeightByCapability bool `toml:"weight_by_capability" json:"weight_by_capability,omitempty"`
	// WeightByLinkRate shares capacity in proportion to each terminal's
	// PHY rate (airtime fairness: every terminal gets the same share of
	// the medium's time, not of its bytes; Heusse et al., INFOCOM 2003,
	// the 802.11 performance anomaly). Used only when every terminal's rate
	// is known; WeightByCapability takes precedence.
	WeightByLinkRate bool `toml:"weight_by_link_rate" json:"weight_by_link_rate,omitempty"`
	// WeightByAccess shares capacity in proportion to what 802.11's DCF
	// with frame aggregation (802.11n/ac/ax A-MPDU) carries for each
	// terminal per access: AccessFrames frames, or as many as its PHY rate
	// fits into the longest PPDU (5.484 ms) where that is fewer — the split
	// plain CUBIC gets where the air, not the wire, is the bottleneck
	// (accessWeight). For aggregating WLANs whose uplink is faster than the
	// air: where the wire binds, plain CUBIC leaves a slow terminal far
	// more than this split (docs/policies.md step 5). Used only when every
	// terminal's rate is known; WeightByCapability takes precedence; not
	// with WeightByLinkRate.
	WeightByAccess bool `toml:"weight_by_access" json:"weight_by_access,omitempty"`
	// AccessFrames is the most frames one access carries, the BlockAck
	// window: 64 for 802.11n/ac (the default), 256 for 802.11ax; 1 for a
	// WLAN without aggregation (802.11a/b/g), where every terminal then
	// weighs the same, as DCF's one frame per access gives them.
	AccessFrames uint32 `toml:"access_frames" json:"access_frames,omitempty"`
	// DisableSoloFloor turns off the lower bound set when no peer is heard.
	DisableSoloFloor bool `toml:"disable_solo_floor" json:"disable_solo_floor,omitempty"`
	// OffRatio, OffAfter, OffFor: competitive mode (coop_compete.go). When
	// the group's queueing delay exceeds OffRatio × its target and has not
	// shrunk (to 80 %) after coop cut its capacity estimate by a third, at
	// least OffAfter and two RTTs later, coop releases its bounds for OffFor
	// (doubling, up to 8×, while the queue stays inelastic). Defaults 2,
	// 1 s, 30 s. DisableSwitchOff keeps coop on.
	OffRatio         float64       `toml:"off_ratio" json:"off_ratio,omitempty"`
	OffAfter         time.Duration `toml:"off_after" json:"off_after,omitempty"`
	OffFor           time.Duration `toml:"off_for" json:"off_for,omitempty"`
	DisableSwitchOff bool          `toml:"disable_switch_off" json:"disable_switch_off,omitempty"`
	// DownloadRoom is a download's upper bound over its target window
	// while the group's queue is under its target; at or above the target
	// the bound is the target window itself. It was meant to spare ACK
	// frames (each costs a contention round on 802.11): receivers of
	// bounded downloads ACKed nearly every segment. That turned out to be
	// the kernel's reaction to a raised receive clamp, fixed in the
	// datapath since 2026-11-25 (docs/datapath.md, "Raising a bound"), not
	// a cost of a window the sender fills. And room is what the sender
	// grows into: behind a 1000-frame AP
	// queue, 10 downloads at 256 ms with room 2 swung between the target and
	// 2.7 × the base RTT for the whole minute (p95 731 ms, cubic's 741),
	// where with none they stayed at 1.15–1.35 × after the start and
	// delivered more (22.91 against 22.17 Mbit/s over 10–60 s); behind a
	// 100-frame queue the room gained under 2 % (docs/policies.md,
	// Downloads). Default 1 = none; at most 8.
	DownloadRoom float64 `toml:"download_room" json:"download_room,omitempty"`
	// DisableQueueProbe keeps the queue per contender at QueueSegments
	// instead of learning it (coop_probe.go).
	DisableQueueProbe bool `toml:"disable_queue_probe" json:"disable_queue_probe,omitempty"`
}

// Defaults returns c with every zero field replaced by its default.
func (c CoopParams) Defaults() CoopParams {
	def := func(x *float64, d float64) {
		if !(*x > 0) {
			*x = d
		}
	}
	def(&c.TargetRatio, 1.15)
	def(&c.Gain, 0.5)
	def(&c.GainMin, 0.5)
	def(&c.GainMax, 1.25)
	def(&c.LoFraction, 0.5)
	def(&c.Headroom, 0.1)
	def(&c.ProbeCap, c.TargetRatio*c.GainMax)
	def(&c.BusyCap, 1.1)
	def(&c.DownloadRoom, 1)
	def(&c.OffRatio, 2)
	if c.HiFloor == 0 {
		c.HiFloor = 2
	}
	if c.QueueSegments == 0 {
		c.QueueSegments = 2
	}
	if c.AccessFrames == 0 {
		c.AccessFrames = 64
	}
	if c.OffAfter <= 0 {
		c.OffAfter = time.Second
	}
	if c.OffFor <= 0 {
		c.OffFor = 30 * time.Second
	}
	return c
}

// Validate reports the first unusable coop parameter.
func (c CoopParams) Validate() error {
	bad := func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) || x < 0 }
	switch {
	case bad(c.TargetRatio) || (c.TargetRatio != 0 && c.TargetRatio <= 1):
		return fmt.Errorf("coop target ratio %v: want a value > 1 (default 1.15)", c.TargetRatio)
	case bad(c.Gain) || c.Gain > 1:
		return fmt.Errorf("coop gain %v: want 0 < k <= 1 for a monotone, stable loop (default 0.5)", c.Gain)
	case bad(c.GainMin) || c.GainMin > 1:
		return fmt.Errorf("coop minimum gain %v: want 0 < g <= 1 (default 0.5)", c.GainMin)
	case bad(c.GainMax) || (c.GainMax != 0 && c.GainMax < 1):
		return fmt.Errorf("coop maximum gain %v: want g >= 1 (default 1.25)", c.GainMax)
	case bad(c.LoFraction) || c.LoFraction > 1:
		return fmt.Errorf("coop lower-bound fraction %v: want 0..1 (default 0.5)", c.LoFraction)
	case bad(c.Headroom), bad(c.Capability):
		return fmt.Errorf("coop headroom %v / capability %v: want finite values >= 0", c.Headroom, c.Capability)
	case bad(c.OffRatio) || (c.OffRatio != 0 && c.OffRatio < 1):
		return fmt.Errorf("coop switch-off ratio %v: want a multiple of the target >= 1 (default 2)", c.OffRatio)
	case bad(c.ProbeCap) || (c.ProbeCap != 0 && c.ProbeCap < 1):
		return fmt.Errorf("coop probe cap %v: want >= 1 (default target ratio × maximum gain)", c.ProbeCap)
	case bad(c.BusyCap) || (c.BusyCap != 0 && c.BusyCap < 1):
		return fmt.Errorf("coop busy cap %v: want >= 1 (default 1.1)", c.BusyCap)
	case c.WeightByAccess && c.WeightByLinkRate:
		return errors.New("coop weight_by_access and weight_by_link_rate: choose one (per-access shares as DCF gives them, or equal airtime)")
	case c.AccessFrames > MaxAccessFrames:
		return fmt.Errorf("coop access frames %d: want 1..%d, the BlockAck window of the WLAN (64 for 802.11n/ac, 256 for 802.11ax; default 64)", c.AccessFrames, MaxAccessFrames)
	case bad(c.DownloadRoom) || (c.DownloadRoom != 0 && c.DownloadRoom < 1) || c.DownloadRoom > 8:
		return fmt.Errorf("coop download room %v: want 1..8, a multiple of a download's target window (default 1 = none)", c.DownloadRoom)
	}
	return nil
}

// coop is this project's policy. See docs/policies.md for the derivation.
//
// Every EvalInterval it:
//
//  1. forms the group of active terminals: self (if it has flows) and every
//     peer with ActiveFlows > 0;
//  2. computes the group's base RTT R̄ (mean of the terminals' min RTTs), the
//     shared queueing delay d (median over terminals of SRTT − min RTT: all
//     terminals queue behind the same AP) and the aggregate ratio
//     ρ = (R̄ + d)/R̄;
//  3. updates the capacity estimate C (bytes/s) multiplicatively,
//     C ← C · clamp((ρ*/ρ)^k, GainMin, GainMax), capped at ProbeCap × the
//     measured sum of all terminals' delivery rates; C starts at what the
//     group's windows carry at its first inflation (no less than that sum);
//  4. shares C max-min by demand (application-limited terminals get what they
//     use plus Headroom, the rest split the remainder, optionally weighted by
//     capability), then splits this terminal's share the same way over its own
//     flows;
//  5. turns each flow's rate r into a window for the common target queueing
//     delay d* = (ρ*−1)·R̄: hi = max(HiFloor, r·(R_f + d*)/MSS), R_f the
//     flow's own min RTT, so flows with different wired delays get equal rates;
//  6. sets lo = LoFraction·hi while ρ < ρ* (not inflated: a loss is not
//     congestion and must not collapse cwnd, papers/002), and at least
//     r·R_f/MSS while the bottleneck idles (d ≤ d*/4: the window follows the
//     estimate's ramp up), lo = 0 otherwise;
//     a download's hi is DownloadRoom × its window while not inflated.
//
// Loop gain: if all terminals run coop and C is above the true capacity C₀
// the queue settles where ρ = ρ*·C/C₀, so one step maps ln(C/C₀) to
// (1−k)·ln(C/C₀): with k = 0.5 the error halves every step, monotonically;
// with one step of measurement delay the poles are at |z| = √k ≈ 0.71 (k < 1
// is stable). The gain clamps bound any single step to ×0.5 … ×1.25.
//
// With no peer heard there is nothing to share: no upper bound; while the
// flow's own ratio_rtt < ρ* a lower bound of LoFraction × (recent rate × min
// RTT) keeps a non-congestion loss from collapsing cwnd; otherwise inactive.
type coop struct {
	p        Params
	tick     cadence
	capacity float64 // bytes/s, 0 = not estimated yet
	last     Decision
	rateMem  map[netip.Addr]float64 // decaying maximum of the per-flow rate, per destination
	// targets are the last rate targets per destination (bytes/s per bulk
	// flow) and the target queueing delay, kept for tests and reasons.
	targets map[netip.Addr]float64
	dStar   time.Duration
	// comp is the competitive-mode (switch-off) state; peakRate a slowly
	// decaying maximum of this terminal's delivery rate (× peakDecay per
	// evaluation), restored when coop competes.
	comp     compete
	peakRate float64
	// pay judges each off period by its outcome (coop_payoff.go).
	pay payoff
	// peakGroup is the same decaying maximum of the group's delivery (Σ rates):
	// what the medium has been seen to carry for the group (targetQueue).
	peakGroup float64
	// lastGroup is the group's delivery at the evaluation before (0 = none):
	// a delivery still growing fast is a slow start's (firstEstimate).
	lastGroup float64
	// lastQueue is the group's queueing delay at the evaluation before (s):
	// a queue a cut drained since is no idle bottleneck (group.drained).
	lastQueue float64
	// probe learns the queue per contender the medium needs
	// (coop_probe.go); probeWindow is the group's window sum at the first
	// evaluation of epoch probeEpoch's probe phase, and probeOpen whether
	// its queue then let the group probe (groupProbing).
	probe       queueProbe
	probeEpoch  int64
	probeWindow float64
	probeOpen   bool
	// probeCap is the capacity estimate when the probe's value now in
	// force came into force (0: none in force); unprobe restores it.
	probeCap float64
	// episodeHi holds, per destination, the upper bound in force when the
	// open elasticity episode began (capToEpisode); nil while none is open.
	episodeHi map[netip.Addr]uint32
}

// peakDecay is the weight per evaluation that the peaks of delivery
// (coop.peakRate, coop.peakGroup) keep: a half-life of 69 s at 0.5 s.
const peakDecay = 0.995

func newCoop(p Params) *coop {
	return &coop{p: p, rateMem: map[netip.Addr]float64{}, targets: map[netip.Addr]float64{}}
}

func (c *coop) Name() string { return "coop" }

// Decide is one evaluation: form the group, then (unless competitive mode
// or the first measurement decides otherwise) step the capacity estimate,
// share it and turn the shares into windows. The phases are pure functions
// in coop_phases.go.
func (c *coop) Decide(v View) Decision {
	cp := c.p.Coop
	gs := groupByDst(v.Flows, c.p.MSS)
	if len(gs) == 0 {
		c.reset()
		return Decision{Reason: "coop: no flows"}
	}
	eval, update := c.tick.due(v.Now, c.p.EvalInterval, gs)
	if !eval {
		d := copyDecision(c.last)
		d.Probe = "" // what the probe did is said once, at the evaluation that did it
		return d
	}
	c.rememberRates(gs, update)
	self := selfTerminal(gs, cp.Capability)
	self.use = windowUse(v.Flows, c.last)
	self.cwnd = bulkWindow(v.Flows)
	self.link = finiteOr0(v.LinkRate)
	c.peakRate = max(c.peakRate*peakDecay, self.windowCappedRate(float64(c.p.MSS)))
	g, ok := formGroup(self, peerTerminals(v.Peers))
	g.air = airOf(v.Air, v.Peers)
	if !ok {
		c.capacity = 0
		c.last = Decision{Reason: fmt.Sprintf("coop: %d peers heard but no RTT known yet; no bounds", g.peers)}
		return copyDecision(c.last)
	}
	c.peakGroup = max(c.peakGroup*peakDecay, g.measured)
	if update {
		c.pay.note(self.rate, g.measured/g.n())
	}
	c.last = c.evaluate(v, gs, g, update)
	c.lastGroup, c.lastQueue = g.measured, g.d
	if c.last.Mode == "" {
		c.last.Mode = ModeCooperative
	}
	if !c.comp.open() {
		c.episodeHi = nil
	}
	return copyDecision(c.last)
}

// evaluate decides for a group whose delay is known.
func (c *coop) evaluate(v View, gs []dstGroup, g group, update bool) Decision {
	cp := c.p.Coop
	mss := float64(c.p.MSS)
	// The comparison uses the estimate the current windows were sized for
	// (the measurement before the first estimate).
	capRef := c.capacity
	if capRef == 0 {
		capRef = g.measured
	}
	dStar := c.targetQueue(g, mss, capRef, c.probe.current(cp)) // s
	targetRatio := (g.rbar + dStar) / g.rbar
	inflated := g.d >= dStar

	// Switching off when it does not help (papers/004 §VI): when the queue
	// does not shrink while the cooperating group cuts its windows, it is
	// not ours (compete, coop_compete.go): no bounds for the off period,
	// then a fresh start (the capacity is measured again).
	rev, reversed := "", false // why competitive mode ended now, if it did (a reversal: coop_payoff.go)
	if !cp.DisableSwitchOff {
		if d, done := c.switchOff(v.Now, gs, g, dStar, mss); done {
			return d
		} else {
			rev, reversed = d.Reason, d.Reversed
		}
	}

	// Capacity estimate. Until the group's RTT first inflates there is no
	// measurement of capacity (the path is not saturated): no upper bound,
	// only the lower bound of solo mode. At the first inflation the path is
	// saturated, and what the windows carry starts the estimate.
	if c.capacity == 0 && (!inflated || !(g.measured > 0)) {
		d := c.solo(gs, joinReasons(rev, fmt.Sprintf("coop: %d terminals, ratio %.2f (target %.2f), measured %.0f B/s: capacity not measured yet (no upper bound)", len(g.terms), g.ratio(), targetRatio, g.measured)))
		d.Reversed = reversed
		return d
	}
	gain, firstNote := c.estimate(v.Now, g, dStar, mss, update)
	stepNote := c.stepProbe(v, g, mss, dStar, update)
	probeNote := stepNote + firstNote
	// The windows use the target for the new estimate; while the
	// elasticity test runs they are sized for the queue as it is: the probe
	// is a cut of a third of what is in flight, not a slam to the target's
	// window (4× at 256 ms behind a second of someone else's queue, 100× at
	// 4 ms), and a queue of the group then drains with the windows
	// following it down (coop_compete.go).
	dStar = c.targetQueue(g, mss, c.capacity, c.probe.current(cp))
	share := terminalShare(withSplit(cp, c.probe.accessNow()), g.terms, c.capacity)
	per, targets := flowBounds(cp, v.Flows, share, g, c.windowQueue(dStar, g.d, g.air), inflated, c.p.MSS)
	if c.comp.open() {
		c.capToEpisode(per)
	}
	c.targets, c.dStar = targets, seconds(dStar)

	d := decision(per, c.reason(g, gain, targetRatio, dStar, share, inflated, boundsReason(gs, per, targets), probeNote))
	d.Reason, d.Reversed = joinReasons(rev, d.Reason), reversed
	if !cp.DisableQueueProbe {
		d.QueueSegments, d.Access = uint32(c.probe.learned(cp)), c.probe.access
		d.Plan, d.Probe = c.probe.announced(cp), stepNote
	}
	return d
}

// estimate updates the capacity estimate at an evaluation (update: a
// periodic one) and returns the loop's gain and, for a first estimate taken
// from the windows, a note for the reason: the first estimate is the
// group's delivery at its first inflation, or what its windows carry while
// that delivery lags a slow start (firstEstimate); later ones follow the
// queue against the target dStar (nextCapacity).
func (c *coop) estimate(now time.Time, g group, dStar, mss float64, update bool) (gain float64, note string) {
	cp := c.p.Coop
	switch {
	case c.capacity == 0:
		first := firstEstimate(g, c.lastGroup, mss, c.p.EvalInterval)
		c.capacity, c.probeCap = max(first, g.n()*mss), 0 // a probe's start belongs to the estimate before (unprobe)
		if !cp.DisableSwitchOff && c.pay.trusted(now) {
			// The elasticity test starts with it, so the first windows
			// are a probe at today's queue, not a slam to the target's.
			c.comp.begin(now, len(g.terms), g.d, c.capacity, first)
		}
		if first > g.measured {
			note = "; first estimate: what the windows carry at their RTT, the delivery lagging a slow start"
		}
	case update:
		// Far above the target while the elasticity test runs, the
		// estimate is not lifted to the delivery (nextCapacity): beside
		// CUBIC hosts at 256 ms the lift undid the cut for 10 s in the lab.
		// An episode that (re)started this tick takes the group as it is:
		// a peer whose status came late drops out of the sum for a tick,
		// the busy cap halves the estimate, and without the lift when it
		// is back the next episode starts from that (the lab: 560 → 206 kB/s
		// in two such ticks, the terminals squeezed for the rest of the run).
		lift := !c.comp.open() || c.comp.startedAt(now) || g.d < cp.OffRatio*dStar
		hold := max(c.comp.hold(g.measured), c.pay.hold(now, g.d, dStar, g.n()))
		g.drained = c.lastQueue >= dStar
		c.capacity, gain = nextCapacity(cp, g, c.capacity, dStar, mss, hold, lift)
		return gain, ""
	}
	return 1, note
}

// stepProbe runs the queue probe's step of an evaluation (its agreement
// with the peers and observeProbe) and returns its note for the reason.
// A new target moves the queue by itself, and a probe moves it on purpose:
// the elasticity test starts again from the queue as it is once the target
// holds still. (An episode opened during an up-probe's ramp judged the
// probe's own queue, which rose while the estimate was cut, as someone
// else's: 802.11ac, 1 Gbit/s.)
func (c *coop) stepProbe(v View, g group, mss, dStar float64, update bool) string {
	cp := c.p.Coop
	segsBefore, learnedBefore := c.probe.current(cp), c.probe.learned(cp)
	splitBefore, learnedSplit := c.probe.accessNow(), c.probe.access
	var note string
	leader, follow, ids := probeLeader(v.ID, v.Peers)
	switch {
	case cp.DisableQueueProbe:
	case follow:
		note = c.probe.follow(cp, v.Now, c.p.EvalInterval, leader)
	case c.probe.following:
		c.probe = queueProbe{segs: c.probe.segs, access: c.probe.access} // leading now: its own measurement starts again
	case !ids:
		c.probe.agree(cp, v.Now, c.p.EvalInterval, v.Peers)
	}
	if !c.probe.following {
		note = c.observeProbe(v.Now, g, mss, dStar, update, ids || len(v.Peers) == 0)
	}
	if c.probe.current(cp) != segsBefore || c.probe.accessNow() != splitBefore || c.probe.probing(cp) {
		c.comp.restartEpisode()
	}
	c.unprobe(c.probe.learned(cp) != learnedBefore || c.probe.access != learnedSplit)
	return note
}

// unprobe keeps the capacity estimate of a probe's start for when its
// windows step back to the learned value without adopting it (a rejection,
// or a check against the epoch's tail): the estimate then returns to it,
// never higher. moved reports whether the learned value changed in this
// evaluation's step; probeCap is set exactly while a probe's value was in
// force at the evaluation before.
//
// While an up-probe's windows are in force the group delivers more and the
// estimate follows it (an idle bottleneck's ramp, nextCapacity), and the
// learned value's windows after the step back — the estimate's share of
// the path's base RTT plus the learned queue — carried that excess as
// queue until the estimate came down again, 3–4 s later. On 802.11ac at
// 100 Mbit/s wired (lab, heterogeneous, fortieth session) the estimate rose
// from 5.7–6.9 MB/s to 10.3–10.7 during a probe 2 → 8 segments per
// contender, the windows at the pair stepped back to 9–11 segments where
// the baseline's had been 7, and the epoch's tail, measured at them,
// delivered × 1.26 of the baseline (the receivers' count): the check
// against it read the probe × 0.943 where the receivers read × 1.177, and
// rejected it. Over the checked up-probes of the valid runs of the
// thirty-eighth and thirty-ninth sessions the receivers' tail was × 1.10
// (median, 7 probes) of the baseline after a step 2 → 8; at 8 → 32, where
// the learned queue dominates the windows, × 1.00 (experiments/papers/
// probes.py).
func (c *coop) unprobe(moved bool) {
	switch probing := c.probe.probing(c.p.Coop); {
	case !probing:
		if !moved && c.probeCap > 0 {
			c.capacity = min(c.capacity, c.probeCap)
		}
		c.probeCap = 0
	case c.probeCap == 0 || moved: // a probe begins, or the next after an adopted one (chain)
		c.probeCap = c.capacity
	}
}

// reason is the reason of a bounded evaluation: the group, the estimate
// and its gain, the queue against its target, the share, the bounds
// (boundsReason) and the probe's and the medium's notes.
func (c *coop) reason(g group, gain, targetRatio, dStar, share float64, inflated bool, bounds, probeNote string) string {
	cp := c.p.Coop
	state := "not inflated"
	if inflated {
		state = "inflated"
	}
	if probeNote != "" {
		probeNote = "; " + probeNote
	}
	probeNote += c.comp.mediumNote() + c.comp.air.note() + c.comp.testNote()
	if g.terms[0].use > 0 {
		state += fmt.Sprintf(", own windows at %.2f of their bounds", g.terms[0].use)
	}
	return fmt.Sprintf("coop: %d terminals (%d peers), capacity %.0f B/s (measured %.0f, gain %.3f), ratio %.2f %s (target %.2f; base %v, queue %v, target queue %v at %.0f segments per contender), share %.0f B/s; %s%s",
		len(g.terms), g.peers, c.capacity, g.measured, gain, g.ratio(), state, targetRatio, seconds(g.rbar), seconds(g.d), seconds(dStar), c.probe.current(cp), share, bounds, probeNote)
}

// observeProbe feeds the queue probe (coop_probe.go) one periodic
// evaluation. The group is at its own working point while the capacity is
// measured, its bottleneck is busy (not idle: more than a quarter of the
// target queue, outside a probe's own ticks) and its queue is within
// probeQueueSpan × OffRatio of the target the windows were sized for. At an
// idle bottleneck the estimate is still ramping up (nextCapacity) and the
// delivery rises with it: a probe judged against such a baseline is credited
// with the ramp — ten terminals at 256 ms on 802.11g adopted 8 and then 32
// segments per contender on their start-up's ×1.6–1.9 (lab, default,
// 2026-11-26; a target queue of 168 ms). The span is wide because every
// terminal must reach the same answer from slightly different views: on an
// aggregating medium the queue of two segments per contender sits at 2–5 ×
// its target (the delay of a round of small aggregates), and a bound near
// that made one terminal of four probe alone (lab, heterogeneous). Hosts
// without coopcc queue hundreds of milliseconds, far beyond. A queue above
// the span that the elasticity test has found to be the group's
// (compete.owns) is the group's working point too: a medium whose access
// delay alone is above the span (802.11ac at 1 Gbit/s: 4 ms of floor against
// a 0.9 ms target) must be able to learn that it needs more queue. A probe
// is worth making when it moves d* by a quarter or more. The span is
// OffRatio × the target only until the group's queue has proved its own
// since the capacity was last measured (compete.provedOurs; unless the
// elasticity test is disabled): a queue the elasticity test is judging may
// be someone else's, and beside hosts without coopcc more queue pays.
func (c *coop) observeProbe(now time.Time, g group, mss, sized float64, update, halves bool) string {
	cp := c.p.Coop
	if !update || cp.DisableQueueProbe {
		return ""
	}
	ramping := g.idle(sized) && !c.probe.probing(cp) // an up-probe's first ticks are below its target
	// A down-probe's queue drains from the learned target's: the span is
	// the larger target's. Against the probe's own, half the learned one,
	// a queue just over the learned target voided every down-probe in its
	// first tick (the fluid model, TestCoopConvergesInFluidModel).
	sized = max(sized, c.targetQueue(g, mss, c.capacity, c.probe.learned(cp)))
	span := probeQueueSpan * cp.OffRatio * sized
	if !cp.DisableSwitchOff && !c.comp.provedOurs() {
		span = cp.OffRatio * sized // no wider than a queue the elasticity test leaves alone
	}
	eligible := c.capacity > 0 && !ramping && c.queueLetsProbe(g.d, span)
	bites := func(s float64) bool { return c.probeMoves(g, mss, s) }
	deep := g.d >= c.targetQueue(g, mss, c.capacity, c.probe.probeValue(cp, 1))
	skew, differs := splitSkew(cp, g.terms)
	t := probeTick{n: len(g.terms), delivery: g.measured, sampled: g.terms[0].rateSampled, eligible: eligible, deep: deep, halves: halves, splits: halves && differs, skew: skew}
	return c.probe.observe(cp, now, c.p.EvalInterval, t, bites)
}

// queueLetsProbe reports whether a queue d (s) lets the group probe: it is
// within span (observeProbe's) or the elasticity test found it the group's
// own (compete.owns).
func (c *coop) queueLetsProbe(d, span float64) bool { return d <= span || c.comp.owns(d) }

// probeMoves reports whether s segments per contender would move the
// target d* by a quarter or more from where the learned value puts it: a
// probe worth making (observeProbe), and one that moves the queue
// (groupProbing).
func (c *coop) probeMoves(g group, mss, s float64) bool {
	cp := c.p.Coop
	now0 := c.targetQueue(g, mss, c.capacity, c.probe.learned(cp))
	d := c.targetQueue(g, mss, c.capacity, s)
	return d >= 1.25*now0 || d <= 0.8*now0
}

// switchOff runs the elasticity test (coop_compete.go): while competitive
// mode is on, or when this evaluation enters it, it returns that decision
// and done = true. When this evaluation ends competitive mode — it did not
// pay (coop_payoff.go: Reversed), or the group came back under bounds
// (compete.rejoin) — done is false and the decision carries only why, for
// the evaluation to go on with.
func (c *coop) switchOff(now time.Time, gs []dstGroup, g group, dStar, mss float64) (Decision, bool) {
	cp := c.p.Coop
	fresh := now.Add(-max(PeerFresh, 2*c.p.EvalInterval))
	heard, bounded := g.boundedPeersSince(fresh), g.boundedPeers()
	c.comp.stretch(now, g.rbar+g.d, cp.OffFor)
	back, ended := c.comp.rejoin(now, bounded, heard, len(g.terms)-1, c.pay.settle(cp.OffAfter))
	rev, paused := "", ""
	goOn := func() (Decision, bool) { // cooperate, saying why competing ended now (if it did) and why the test paused
		return Decision{Reason: joinReasons(rev, ended, paused), Reversed: rev != ""}, false
	}
	if off, why := c.comp.off(now); off {
		rev = c.pay.judge(now, g.rbar+g.d, cp.OffAfter, cp.OffFor)
		if rev == "" {
			return c.competing(gs, g.terms[0], fmt.Sprintf("%s; now ratio %.2f, the group delivering %.0f B/s per terminal (judged against %.0f, the lower of this terminal's and the group's per terminal when it cooperated)", why, g.ratio(), g.measured/g.n(), c.pay.rate), 0), true
		}
		// Competing did not pay (coop_payoff.go): cooperate again now,
		// with windows sized for the target — the queue is the group's
		// own and drains — and no verdict during the hold-off, unless
		// the queue shows that returning did not pay either (returned).
		c.pay.back(now, g.d, g.rbar+g.d, c.comp.endOff(now))
	}
	if c.comp.retry(now) {
		c.capacity = 0
		c.pay.ended()
		if rev != "" {
			// The estimate starts from the hold (coop_payoff.go): what
			// the group delivered when it cooperated, cut once.
			c.capacity = c.pay.hold(now, g.d, dStar, g.n())
		}
	}
	peers := peersBack{heard: heard, bounded: bounded, peers: len(g.terms) - 1}
	if until, why := c.pay.returned(now, g.d, dStar, g.rbar+g.d, peers, cp.OffAfter); why != "" {
		c.comp.resumeOff(now, until)
		c.capacity = 0
		return c.competing(gs, g.terms[0], why, max(c.peakRate, c.comp.startShare())), true
	}
	if !c.pay.trusted(now) { // a reversal always lands here: its hold-off began now
		c.comp.quiet()
		return goOn()
	}
	// The capacity floor is HiFloor segments per terminal over the RTT the
	// windows are sized for (R̄ + d*, or R̄ + the queue while an episode is
	// open: flowBounds), the least the windows carry anyway: a cut below it
	// changes no window, so the elasticity test sees the capacity the
	// windows actually follow. (Taken at R̄ alone, 10 terminals at 4 ms had a
	// floor of 4.8 MB/s on a 2.9 MB/s medium, "at the floor" from the first
	// tick, and the verdict came before any cut.) The estimate itself
	// goes no lower than a segment per terminal per second (nextCapacity's
	// guard), so over an RTT of more than HiFloor seconds the windows hold
	// no less than a segment per second of it: without that, at a squeezed
	// group's 3 s the estimate stopped at 4 × 1448 B/s, above both the
	// floor (3.6 kB/s) and the cut (0.7 × the group's 3 kB/s), and the
	// test waited for a cut that could not come
	// (TestCoopSqueezedGroupAtTheFloorGetsItsVerdict; compete.inelastic has
	// the lab run).
	sized := g.rbar + c.windowQueue(dStar, g.d, g.air)
	floorWin := max(float64(cp.HiFloor), sized) * mss * g.n()
	effective := 0.0
	if c.capacity > 0 {
		effective = max(c.capacity, floorWin/sized)
	}
	c.comp.see(g.medium)
	c.comp.seeAir(now, g.air)
	c.comp.seeWindows(g.boundWindow)
	c.comp.floorRate(c.peakGroup / 2)
	// The test judges the group's cut: while a peer under bounds (by a
	// fresh status) is under its own target (peersUnderTarget) and the queue
	// is above this terminal's, that peer cuts nothing and its windows may
	// rise (a probe of its own), so the episode pauses; observe still keeps
	// its books (the queue at the target, the group's size), and a paused
	// episode is not judged. Four coop terminals on 802.11ac at 4 ms (lab,
	// heterogeneous --quick, this VM, 2026-11-27): three probed 2 → 8
	// segments per contender at an epoch's start (hi 13–15 → 16–17, lo 8),
	// their windows rising less than the quarter groupProbing counts; the
	// fourth, at 2, cut to hi 9–10 and its estimate to 70 %, the group's
	// windows stayed at 93 % and the queue at 6.9 → 6.8 ms, and its verdict
	// took the group off. In another run one peer probed (hi 10 → 18, lo 9),
	// the group's windows rose to 115 % of the episode's while two terminals
	// cut, and both gave the verdict.
	verdict := func(why string) (Decision, bool) {
		c.capacity = 0
		c.pay.verdict(now, g.rbar+g.d)
		// The floor starts from the terminal's recent peak, or the group's
		// delivery per terminal when the episode began if that is more:
		// a terminal whose windows were bounded before it ever reached its
		// share (lab, 2026-11-24, beside 2 CUBIC hosts at 256 ms: a peak of
		// 424 kB/s where its peer had carried 896).
		return c.competing(gs, g.terms[0], why, max(c.peakRate, c.comp.startShare())), true
	}
	if why := c.comp.airJudge(now, cp, len(g.terms), g.d, dStar, g.rbar, effective, floorWin, g.measured); why != "" {
		return verdict(why)
	}
	probing, rose := c.groupProbing(now, g, mss, dStar)
	under := g.peersUnderTarget(fresh)
	switch {
	case rose:
		c.comp.pause()
		if g.d > dStar {
			paused = "elasticity test paused: the windows under bounds rose by more than a quarter in the group's queue probe"
		}
		return goOn()
	case g.d > dStar && under > 0:
		c.comp.pause()
		paused = fmt.Sprintf("elasticity test paused: %d of %d peers under bounds are under their targets", under, heard)
	case probing:
		c.comp.dropHeld()
	default:
		c.comp.watch(now, g.window, g.d, dStar, g.rbar, cp.OffAfter)
	}
	if back && c.comp.rejoined(now, g.d, effective) {
		return goOn()
	}
	if why := c.comp.observe(now, cp, len(g.terms), g.d, dStar, g.rbar, effective, floorWin, sized, g.measured); why != "" {
		return verdict(why)
	}
	return goOn()
}

// groupProbing reports whether a queue probe of the group may be running at
// now (probing: an epoch's first probeAgree evaluations — its probe and the
// evaluations until every terminal has taken the majority's verdict,
// coop_probe.go — or the whole epoch where a chained step runs in its
// second half (queueProbe.chain), on a path where an up-probe moves the
// target, in an epoch that began at this terminal's working point) and
// whether the windows of the terminals under bounds (Σ cwnd, own and
// reported) have risen by more than a quarter since the epoch's first
// evaluation (rose). Then the queue
// moves on purpose: a peer that probes when this terminal does not (their
// schedules apart after different verdicts) raises it under this terminal's
// test — lab, heterogeneous 100 Mbit/s on the 16-core machine, 2026-11-26:
// three terminals probed 16 → 64 segments (windows 29 → 90), the fourth took
// the queue they built (10 → 31 ms) for someone else's and switched off, and
// the others followed it off (2 of 3 runs). A terminal that may not probe in
// this epoch itself (no baseline: a tick of the epoch before was above the
// probe's span) still sees its peers' probe: ten coop terminals at 4 ms
// (lab, scalability --quick, 2026-11-27) split five and five at an epoch's
// start, five probed 2 → 8 segments per contender (windows 5 → 11), the
// queue rose from 23 to 41 ms, and the five that did not probe judged it
// someone else's and switched off, the others after them. While the windows
// have risen the elasticity test pauses; while a probe may run the
// held-windows rule does (the peers' windows are reported a status interval
// after their queue shows: at 1 Gbit/s one terminal gave that verdict 0.1 s
// into a probe). Hosts without coopcc raise the queue without the group's
// windows, and void the epoch's probe: the test goes on; so does a peer in
// competitive mode, whose windows are not counted. Unknown windows (a peer
// that reports none) never count as risen. Nor do windows in an epoch whose
// first evaluation found the queue where no terminal of the group probes
// (above the widest probe span, probeQueueSpan × OffRatio × d*, and not
// the group's own: observeProbe): there the windows rise because they are
// sized for the queue as it is (windowQueue) — beside 3 CUBIC hosts under
// ARF (lab, papers/004's coexistence-2012, N = 5, k = 2, 2026-11-28) a
// queue of 0.4–3 s, ten times the target, raised two coop terminals' windows
// by a quarter in the first evaluations of an epoch every 5–6 s, each time
// the test paused and started again from the queue then, and one
// terminal's first verdict came 73 s into the run, its estimate at 11 %
// of what it began with.
func (c *coop) groupProbing(now time.Time, g group, mss, dStar float64) (probing, rose bool) {
	cp := c.p.Coop
	e, phase, ok := epochAt(now, c.p.EvalInterval)
	if !ok || cp.DisableQueueProbe || c.capacity <= 0 || phase >= probeAgree*int64(c.p.EvalInterval) && !c.probe.secondHalf(e) {
		return false, false
	}
	if !c.probeMoves(g, mss, c.probe.probeValue(cp, 1)) {
		return false, false
	}
	if e != c.probeEpoch || c.probeWindow <= 0 {
		c.probeEpoch, c.probeWindow = e, g.boundWindow
		c.probeOpen = c.queueLetsProbe(g.d, probeQueueSpan*cp.OffRatio*dStar)
	}
	return c.probe.atWorkingPoint(), c.probeOpen && g.boundWindow > 0 && g.boundWindow > (1/InelasticQueue)*c.probeWindow
}

// targetQueue is the target d* (targetQueue) for the estimate capacity,
// whose segment floor is served at no less than half the group's peak
// delivery (peakGroup): a medium that has carried that much for the group
// serves its contenders' segments at least that fast. A group squeezed by
// hosts without coopcc sees its estimate collapse, and the floor
// segs·MSS·(n+½)/C grows with it (n+1 then): beside 8 CUBIC hosts at 256 ms (lab,
// coexistence N = 10, 2026-11-26) a terminal's estimate fell from 500 to
// 3 kB/s, its target queue rose from 45 ms to 12 s, the queue (0.4–1.6 s)
// was "at the target", and the elasticity test that would have released it
// never opened an episode — 0.45 Mbit/s against the hosts' 2.6. Half: a
// medium that rate adaptation slowed down may really carry less.
func (c *coop) targetQueue(g group, mss, capacity, segs float64) float64 {
	if capacity > 0 {
		capacity = max(capacity, c.peakGroup/2)
	}
	return targetQueue(c.p.Coop, g, mss, capacity, segs)
}

// windowQueue is the queueing delay (s) the windows are sized for: the
// target d*, or, while an elasticity episode is open, the queue d as it is
// (evaluate: the probe is a cut of what is in flight). Until the episode's
// cut is in force no more than the queue the episode began with: at the
// estimate it began with, windows sized for a growing queue feed it — 10
// terminals at 4 ms, after a queue probe, went from hi 7 to 10 in a tick
// while the queue grew from 40 to 67 ms, and the test judged that growth
// "not ours" (the whole group switched off, p95 2.8 s). Once the cut is in
// force the windows carry the held estimate at the queue as it is (a queue
// of the group's own then drains by itself, 30 % of what is in flight a
// round trip), capped by the bounds in force when the episode began
// (capToEpisode). Sized for the episode's reference queue instead, the
// windows fell with every dip of a queue that was not the group's — the
// reference is reset to the queue it followed to (compete.followed) — and
// never rose again: after the off period beside 2 CUBIC hosts on a 4 ms
// path (lab, coexistence short-path, 60 s, 2026-11-26), hi went from 718
// to 2 segments in 13 s at an estimate of 697 kB/s, the reference at a
// 20 ms dip, the queue at 140 ms: the terminals carried a sixth of the
// held estimate until the verdict, 10–25 s after the retry. The same
// holds while an episode is closed for a new target or a queue probe and
// will resume against its reference (compete.referenced): sized for the
// target instead, an up-probe over the hosts' 140 ms of queue slammed the
// windows from 139 to 7 segments (the probe's 22 ms target), and the
// resumed episode kept them there.
//
// Where the group holds the busy medium's air (air.owned) the test gives no
// verdict and the queue is the group's own: the windows are sized for the
// target whatever the episode. Sized for the queue as it is, one coop
// terminal alone at 256 ms (lab, scalability --quick, twenty-fourth session)
// kept the 170–470 ms of its slow start's overshoot for 2.5 s, the windows
// coming down only with the estimate's cuts (1306 → 913 → 656 → 624
// segments a second apart), 10 % of a 25 s run at 1.7–2.9 × its base RTT.
// So are they for the rest of an episode that has seen the air the group's
// (compete.airOwned, as its hold): the share read swings across
// AirOwned's line in a start's first seconds.
func (c *coop) windowQueue(dStar, d float64, a air) float64 {
	switch {
	case a.owned() || c.comp.airOwned || (!c.comp.open() && !c.comp.referenced()):
		return dStar
	case c.comp.cutMade():
		return max(dStar, d)
	}
	return max(dStar, min(d, c.comp.d0))
}

// capToEpisode caps every destination's upper bound at the one in force
// when the open elasticity episode began (the first bound of the episode
// where none was in force), lowering its lower bound with it: above the
// target no window grows past what the episode's cut was made from — sized
// for a queue that was not this terminal's doing, the windows of an
// 802.11ac terminal rose from 27 to 50 segments in a second, the "cut" a
// raise, and the queue they fed was judged someone else's (lab,
// heterogeneous, 2026-11-25). Below that they follow the queue as it is,
// down and back up (windowQueue).
func (c *coop) capToEpisode(per map[netip.Addr]Bounds) {
	if c.episodeHi == nil {
		c.episodeHi = map[netip.Addr]uint32{}
	}
	for dst, b := range per {
		hi, ok := c.episodeHi[dst]
		if !ok {
			hi = b.Hi
			if prev := c.last.BoundsFor(dst); c.last.Active && prev.Hi > 0 {
				hi = prev.Hi
			}
			c.episodeHi[dst] = hi
		}
		if b.Hi > hi {
			b.Hi = hi
			b.Lo = min(b.Lo, b.Hi)
			per[dst] = b
		}
	}
}

// windowUse is the bulk flows' cwnd over the upper bounds of the last
// decision (0 = unknown: no bound, or no cwnd reported).
func windowUse(flows []FlowView, last Decision) float64 {
	if !last.Active {
		return 0
	}
	var cwnd, hi float64
	for _, f := range flows {
		b := last.BoundsFor(f.Dst)
		if f.AppLimited || f.Cwnd == 0 || b.Hi == 0 {
			continue
		}
		cwnd += float64(f.Cwnd)
		hi += float64(b.Hi)
	}
	if hi == 0 {
		return 0
	}
	return cwnd / hi
}

// bulkWindow is the sum of the bulk (not app-limited) flows' cwnds,
// segments; 0 = none reported.
func bulkWindow(flows []FlowView) float64 {
	var w float64
	for _, f := range flows {
		if !f.AppLimited {
			w += float64(f.Cwnd)
		}
	}
	return w
}

// rememberRates keeps, per destination, a decaying maximum of the per-flow
// delivery rate (×0.9 per evaluation: it halves in about 3.3 s at 0.5 s), so
// the lower bound does not collapse together with the rate right after a loss.
func (c *coop) rememberRates(gs []dstGroup, update bool) {
	seen := map[netip.Addr]bool{}
	for _, g := range gs {
		seen[g.Dst] = true
		mem := c.rateMem[g.Dst]
		if update {
			mem *= 0.9
		}
		c.rateMem[g.Dst] = max(mem, g.Rate/float64(g.Flows))
	}
	for dst := range c.rateMem {
		if !seen[dst] {
			delete(c.rateMem, dst)
		}
	}
}

// solo is the decision without an upper bound: used when no peer is heard
// (nothing to share) and before the group's capacity has been measured. While
// a destination's own ratio_rtt is below target, lo = LoFraction × remembered
// rate × min RTT / MSS (if at least 2 segments); otherwise no bound at all.
func (c *coop) solo(gs []dstGroup, prefix string) Decision {
	cp := c.p.Coop
	clear(c.targets)
	per := map[netip.Addr]Bounds{}
	var parts []string
	active := false
	for _, g := range gs {
		mem := c.rateMem[g.Dst]
		var lo uint32
		if !cp.DisableSoloFloor && g.MinRTT > 0 && g.Ratio < cp.TargetRatio {
			lo = toSegments(cp.LoFraction * mem * g.MinRTT.Seconds() / float64(g.MSS))
			if lo < 2 {
				lo = 0 // a floor of one segment protects nothing
			}
		}
		per[g.Dst] = Bounds{Lo: lo}
		if lo > 0 {
			active = true
		}
		parts = append(parts, fmt.Sprintf("%s: ratio_rtt %.2f, rate %.0f B/s → lo %d", dstName(g.Dst), g.Ratio, mem, lo))
	}
	reason := prefix + "; " + strings.Join(parts, "; ")
	if !active {
		return Decision{Reason: reason}
	}
	return decision(per, reason)
}

// CompeteGain is the lower bound of competitive mode over the terminal's
// window at its delivery rate and base RTT: BBR's window (cwnd_gain 2 ×
// BtlBw × RTprop; Cardwell et al., ACM Queue 14(5), 2016) as a floor under
// the kernel's CUBIC.
const CompeteGain = 2

// competeDecay is how much of the running maximum of the terminal's
// delivery rate in competitive mode one evaluation keeps (half-life 11 s at
// 0.5 s): the floor follows a medium that became more crowded.
const competeDecay = 0.97

// competing is the decision of an evaluation in competitive mode: no upper
// bound, and a lower bound that carries every bulk flow's part of
// CompeteGain × rate at the destination's base RTT. rate is the running
// maximum (decaying by competeDecay per evaluation) of this terminal's
// delivery rate, each one taken at most at what its windows carry at its
// RTT (terminal.windowCappedRate: ACK bursts are no rate). From the
// evaluation that enters
// competitive mode (seed > 0, B/s) the floor also puts every bulk flow back
// at its part of seed at the RTT of that evaluation (or today's, when lower:
// compete.backRTT): the rate the terminal carried before the group cut it
// (its recent peak, or the group's delivery per terminal when the episode
// began), decaying like the running maximum (noteBack). Not at today's RTT
// when higher: that RTT holds the queue the floor itself builds in this
// station, so a floor sized by it feeds on itself — beside 3 CUBIC hosts
// under ARF (lab, papers/004's coexistence-2012, 2026-11-28) floors grew
// 51 → 109 → 221 → 453 → 911 → 1567 → 2361 segments in 4 s; over 10 runs
// the windows rose to 2–8 × the hosts' in 11 of 30 off periods, the
// managed stations dropped 312 frames each at their own 1000-frame queues
// (the hosts 16), and the flows stalled in recovery at a third of the
// hosts' rate until the payoff test reversed the off period. In an all-coop
// group's false verdict under ARF (N = 10, 4 ms) the queue the floors built
// kept the return from standing for the rest of the run (2 of 6 runs).
//
// On 802.11 a station that has a frame ready whenever it wins the medium
// gets its DCF share of the transmissions whatever the others queue in
// their own stations; a window that covers its rate at the base RTT twice
// over keeps one ready behind the hosts' ACKs at the AP. While the window
// limits the delivery the floor is 2 × base / RTT times the window, a
// slow start of sorts; once the delivery stops following the window, the
// floor stops rising. The kernel's CUBIC may grow above it (no upper
// bound), so the terminal competes at least as well as plain CUBIC would
// from there. Without the floor the released CUBIC regrew from the window
// coop had cut it to: beside 2 CUBIC hosts at 256 ms (lab, coexistence
// --quick, N = 4) a managed terminal took 12 s to grow from 100 to 300
// segments, at a third of the hosts' rate.
func (c *coop) competing(gs []dstGroup, self terminal, why string, seed float64) Decision {
	rate := c.comp.noteRate(self.windowCappedRate(float64(c.p.MSS)))
	entering := seed > 0
	seed = c.comp.noteBack(seed)
	flows := 0 // the rate is the bulk flows' (an idle control connection carries none of it)
	for _, g := range gs {
		flows += g.Bulk
	}
	per := map[netip.Addr]Bounds{}
	var parts []string
	for _, g := range gs {
		if g.Bulk == 0 {
			continue
		}
		base := g.MinRTT
		if base <= 0 {
			base = g.SRTT
		}
		mss := float64(max(g.MSS, 1))
		lo := toSegments(CompeteGain * rate / float64(flows) * base.Seconds() / mss)
		note := fmt.Sprintf("%s: lo %d (%d × %.0f B/s over %d flows at base %v", dstName(g.Dst), lo, CompeteGain, rate, flows, base)
		rtt := c.comp.backRTT(g.Dst, g.SRTT.Seconds(), entering)
		if back := toSegments(seed / float64(flows) * rtt / mss); back > lo {
			lo = back
			note = fmt.Sprintf("%s: lo %d (%.0f B/s, the rate before the cut, over %d flows at RTT %v", dstName(g.Dst), lo, seed, flows, roundDelay(rtt))
		}
		per[g.Dst] = Bounds{Lo: lo}
		parts = append(parts, note+")")
	}
	if len(per) == 0 {
		return Decision{Reason: why, Mode: ModeCompeting}
	}
	d := decision(per, why+"; floor "+strings.Join(parts, ", "))
	d.Mode = ModeCompeting
	return d
}

func (c *coop) reset() {
	c.tick = cadence{}
	c.comp, c.peakRate, c.peakGroup, c.lastGroup, c.lastQueue, c.probe, c.probeEpoch, c.probeWindow, c.probeOpen = compete{}, 0, 0, 0, 0, queueProbe{}, 0, 0, false
	c.pay = payoff{}
	c.capacity = 0
	c.last = Decision{}
	c.episodeHi = nil
	clear(c.rateMem)
	clear(c.targets)
}

// MaxMinShares divides capacity among claimants with the given demands
// (+Inf = unlimited) by weighted max-min fairness (water-filling): a claimant
// whose demand is below its weighted fair share gets its demand, the others
// split what remains in proportion to their weights. weights may be nil (all
// 1); weights ≤ 0 or NaN count as 1; demands ≤ 0 or NaN get 0. Unclaimed
// capacity (all demands met) is left unallocated.
func MaxMinShares(capacity float64, demands, weights []float64) []float64 {
	out := make([]float64, len(demands))
	if !(capacity > 0) {
		return out
	}
	w := func(i int) float64 {
		if weights == nil || i >= len(weights) || !(weights[i] > 0) || math.IsInf(weights[i], 0) {
			return 1
		}
		return weights[i]
	}
	open := make([]int, 0, len(demands))
	for i, d := range demands {
		if d > 0 { // excludes NaN
			open = append(open, i)
		}
	}
	// Satisfy the smallest demand-per-weight first.
	sort.SliceStable(open, func(a, b int) bool {
		return demands[open[a]]/w(open[a]) < demands[open[b]]/w(open[b])
	})
	remaining := capacity
	for k, i := range open {
		var wsum float64
		for _, j := range open[k:] {
			wsum += w(j)
		}
		fair := remaining * w(i) / wsum
		if demands[i] <= fair {
			out[i] = demands[i]
		} else {
			out[i] = fair
		}
		remaining = max(remaining-out[i], 0)
	}
	return out
}

// joinReasons joins the non-empty reasons with "; ".
func joinReasons(rs ...string) string {
	var out []string
	for _, r := range rs {
		if r != "" {
			out = append(out, r)
		}
	}
	return strings.Join(out, "; ")
}

// median of durations (0 for none).
func median(xs []time.Duration) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), xs...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return s[m-1]/2 + s[m]/2
}

func finiteOr0(x float64) float64 {
	if finitePos(x) {
		return x
	}
	return 0
}

// seconds converts float seconds to a Duration, saturating instead of
// overflowing.
func seconds(s float64) time.Duration {
	switch {
	case math.IsNaN(s) || s <= 0:
		return 0
	case s >= float64(math.MaxInt64)/1e9:
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(s * 1e9)
}

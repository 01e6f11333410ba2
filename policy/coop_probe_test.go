package policy

import (
	"math"
	"math/rand"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/policy/fairness"
)

// aggregating is the service rate of a medium that sends a station's whole
// queue in one access (A-MPDU): with a frames per access and a0 frames' worth
// of fixed cost per access (contention, preamble, block ack), the medium
// carries peak·a/(a+a0). a is capped at maxA (64 MPDUs in 802.11ac).
func aggregating(peak, a0, maxA float64) func(segsPerStation float64) float64 {
	return func(a float64) float64 {
		a = min(max(a, 1), maxA)
		return peak * a / (a + a0)
	}
}

// runProbe drives a queueProbe with a medium whose delivery follows the
// segments per contender the probe asks for (at once: the closed loop is
// tested in TestCoopAggregationFluid), starting after an uncontrolled start
// that delivered startup (at a queue as deep as an up-probe's: deep). It
// returns the learned segments after the given time and how many
// evaluations ran at a probe's value above the learned one (up: a deeper
// queue) and below it (down).
func runProbe(t *testing.T, medium func(float64) float64, startup float64, deep bool, start float64, dur time.Duration) (learned float64, up, down int) {
	t.Helper()
	return runProbeFrom(t, medium, []probeTick{{n: 4, delivery: startup, deep: deep}}, start, dur)
}

// runProbeFrom is runProbe after the evaluations first (one a period from
// t0 on, as the group's first evaluations give them).
func runProbeFrom(t *testing.T, medium func(float64) float64, first []probeTick, start float64, dur time.Duration) (learned float64, up, down int) {
	t.Helper()
	cp := CoopParams{}.Defaults()
	q := queueProbe{segs: start}
	const period = 500 * time.Millisecond
	bites := func(float64) bool { return true }
	now := t0
	for _, tick := range first {
		q.observe(cp, now, period, tick, bites)
		now = now.Add(period)
	}
	for ; now.Before(t0.Add(dur)); now = now.Add(period) {
		s := q.current(cp)
		switch {
		case s > q.learned(cp):
			up++
		case s < q.learned(cp):
			down++
		}
		q.observe(cp, now, period, probeTick{n: first[0].n, delivery: medium(s), eligible: true}, bites)
		if l := q.learned(cp); l < ProbeMinSegments || l > ProbeMaxSegments {
			t.Fatalf("learned %v segments, outside [%d, %d]", l, ProbeMinSegments, ProbeMaxSegments)
		}
	}
	return q.learned(cp), up, down
}

func TestQueueProbeClimbsToTheAggregationKnee(t *testing.T) {
	// 802.11ac at 433 Mbit/s: a0 ≈ 200 µs of fixed cost × 54 MB/s / 1448 B
	// ≈ 8 frames. 2 segments per access deliver 20 % of the peak.
	medium := aggregating(54e6, 8, 64)
	learned, _, _ := runProbe(t, medium, medium(64), true, 0, 60*time.Second)
	if got := medium(learned) / medium(64); got < 0.8 {
		t.Errorf("learned %v segments per contender: %.0f %% of full aggregates' delivery, want >= 80 %%", learned, 100*got)
	}
}

// The first probe of a group comes in the first epoch after its estimate
// whose end the group spent at its working point (its last probeMeasure
// evaluations and one before them), not only after a whole epoch there: on
// 802.11ac at 100 Mbit/s (lab, heterogeneous) the whole-epoch rule put the
// first probe 9.5 s after the estimate, and the climb to 32 segments per
// contender took most of a 20 s run. A group not at its working point for
// the end of that epoch (a queue above the span: eligible false) waits for
// the next one.
func TestQueueProbeFirstProbeInTheFirstSteadyEpoch(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const period = 500 * time.Millisecond
	epoch := time.Duration(ProbeEpochTicks) * period
	medium := aggregating(54e6, 8, 64)
	firstProbe := func(eligibleFrom time.Duration) time.Duration {
		q := queueProbe{}
		start := t0.Truncate(epoch).Add(epoch + 3*period) // the estimate, 1.5 s into an epoch
		bites := func(float64) bool { return true }
		q.observe(cp, start, period, probeTick{n: 4, delivery: medium(64)}, bites)
		for now := start.Add(period); now.Before(start.Add(4 * epoch)); now = now.Add(period) {
			if q.current(cp) != q.learned(cp) {
				return now.Sub(start)
			}
			q.observe(cp, now, period, probeTick{n: 4, delivery: medium(q.current(cp)), eligible: now.Sub(start) >= eligibleFrom}, bites)
		}
		return -1
	}
	if got := firstProbe(period); got < 0 || got > epoch {
		t.Errorf("at the working point from the evaluation after the estimate: first probe %v after it, want within an epoch (%v)", got, epoch)
	}
	if got := firstProbe(3 * time.Second); got <= epoch {
		t.Errorf("at the working point only from 3 s (the epoch's last evaluation): first probe %v after the estimate, want after the next epoch", got)
	}
}

func TestQueueProbeStaysWhereQueueGainsNothing(t *testing.T) {
	// 802.11g: one frame per access, the delivery does not depend on the
	// queue. coop delivers what the uncontrolled start did. A start that
	// queued as deep as an up-probe was that probe: none in 120 s. One that
	// queued less was none: one up-probe (probeEnd evaluations), rejected,
	// and no other. Below the delayed-ACK pair one down-probe, held for its
	// epoch (ProbeEpochTicks evaluations), rejected (no gain), and no other.
	flat := func(float64) float64 { return 3e6 }
	for _, c := range []struct {
		deep bool
		max  int
	}{{true, 0}, {false, probeEnd}} {
		learned, up, down := runProbe(t, flat, 3e6, c.deep, 0, 120*time.Second)
		if learned != 2 || up > c.max || down > ProbeEpochTicks {
			t.Errorf("flat medium, deep start %v: learned %v segments, %d evaluations probing up, %d down; want 2, <= %d and <= %d", c.deep, learned, up, down, c.max, ProbeEpochTicks)
		}
	}
	// An aggregating medium whose start queued as deep delivered more than
	// two segments per contender do: that is the evidence, and it climbs.
	medium := aggregating(54e6, 8, 64)
	if learned, _, _ := runProbe(t, medium, medium(64), true, 0, 60*time.Second); learned < 32 {
		t.Errorf("aggregating medium after a deep start: learned %v segments, want >= 32", learned)
	}
}

// A deep start that delivered what an adopted up-probe does (UpGain more
// than two segments per contender) is not a probe that failed: the group
// probes, however long it took to reach its working point (the start's
// delivery does not decay first). (One download to a parked terminal in the
// lab: 5–8 % more at the start's queue; credited as failed, no probe in
// 60 s; the probe to 8 segments, adopted at × 1.06–1.08.) A start that
// delivered less is one: its up-probe would gain less than UpGain too.
func TestQueueProbeJudgesACreditedStartUndecayed(t *testing.T) {
	knee := func(s float64) float64 {
		if s >= 8 {
			return 3.18e6 // 6 % more from 8 segments per contender on
		}
		return 3e6
	}
	if learned, _, _ := runProbe(t, knee, 3.16e6, true, 0, 60*time.Second); learned < 8 {
		t.Errorf("a deep start 5.3 %% above the working point: learned %v segments, want >= 8", learned)
	}
	flat := func(float64) float64 { return 3e6 }
	if learned, up, _ := runProbe(t, flat, 3.09e6, true, 0, 60*time.Second); learned != 2 || up != 0 {
		t.Errorf("a deep start 3 %% above a flat medium's working point: learned %v segments, %d evaluations probing up; want 2 and none", learned, up)
	}
	if learned, up, _ := runProbe(t, knee, 2.9e6, true, 0, 60*time.Second); learned != 2 || up != 0 {
		t.Errorf("a deep start 3 %% below the working point: learned %v segments, %d evaluations probing up; want 2 and none", learned, up)
	}
}

// scattered is medium with each evaluation's delivery ±frac off it, in
// turn: the tick-to-tick scatter of a group's measured delivery.
func scattered(medium func(float64) float64, frac float64) func(float64) float64 {
	sign := 1.0
	return func(s float64) float64 {
		sign = -sign
		return medium(s) * (1 + sign*frac)
	}
}

// The credited start's delivery is an evaluation's, and it counts as a gain
// only beyond the working point's scatter (startGained). One terminal alone
// at 4 ms in the lab: its first evaluation carried one kernel rate sample,
// 3.13–3.18 MB/s, the next (still at the start's queue) 3.00–3.03 like the
// working point's ±1 %; by any excess of the first, 4 of 6 runs probed up
// for nothing, 2.5 s at twice the RTT. Where the start did deliver more
// than the working point's scatter (the parked download: 3–5 %), the group
// still probes and climbs.
func TestQueueProbeCreditedStartIsAMeasuredGain(t *testing.T) {
	flat := scattered(func(float64) float64 { return 3.02e6 }, 0.01)
	for _, c := range []struct {
		name  string
		first []probeTick
	}{
		{"a one-ACK sample 4 % above, then the working point's delivery", []probeTick{
			{n: 1, delivery: 3.15e6, sampled: true, deep: true}, {n: 1, delivery: 3.026e6}}},
		{"an evaluation 1 % above (within the scatter)", []probeTick{
			{n: 1, delivery: 3.05e6, deep: true}}},
		{"an evaluation 3 % above (out of the scatter, under UpGain)", []probeTick{
			{n: 1, delivery: 3.11e6, deep: true}}},
	} {
		if learned, up, _ := runProbeFrom(t, flat, c.first, 0, 60*time.Second); learned != 2 || up != 0 {
			t.Errorf("flat medium, %s: learned %v segments, %d evaluations probing up; want 2 and none", c.name, learned, up)
		}
	}
	knee := scattered(func(s float64) float64 {
		if s >= 8 {
			return 3.18e6
		}
		return 3e6
	}, 0.01)
	first := []probeTick{{n: 1, delivery: 3.3e6, sampled: true, deep: true}, {n: 1, delivery: 3.18e6}}
	if learned, _, _ := runProbeFrom(t, knee, first, 0, 60*time.Second); learned < 8 {
		t.Errorf("a start that delivered 6 %% more over an evaluation: learned %v segments, want >= 8", learned)
	}
}

// The credited start's judgement is said once, in the evaluation that
// makes it (startNote): how far the start was from the first baseline, at
// what scatter, and whether the group probes up. The agent's log is where
// the lab reads it (the parked download, the lone upload).
func TestQueueProbeSaysHowTheStartCompared(t *testing.T) {
	for _, c := range []struct {
		start float64
		want  string
	}{
		{3.3e6, "uncontrolled start: delivery ×1.100 (±0.000) of the working point's, a gain it may understate: probing up"},
		{2.97e6, "uncontrolled start: delivery ×0.990 (±0.000) of the working point's, the up-probe it was credited as failed"},
	} {
		cp := CoopParams{}.Defaults()
		var q queueProbe
		const period = 500 * time.Millisecond
		var notes []string
		tick := probeTick{n: 1, delivery: c.start, deep: true, eligible: true}
		for now := t0; now.Before(t0.Add(30 * time.Second)); now = now.Add(period) {
			if note := q.observe(cp, now, period, tick, func(float64) bool { return true }); strings.Contains(note, "uncontrolled start") {
				notes = append(notes, note)
			}
			tick.delivery = 3e6
		}
		if len(notes) != 1 || notes[0] != c.want {
			t.Errorf("start at %.2f MB/s against 3.00: notes %q, want exactly [%q]", c.start/1e6, notes, c.want)
		}
	}
}

// On a medium whose delivery scatters by ±10 % from one evaluation to the
// next and gains nothing from queue (802.11g under ARF at 4 ms), the best
// (the smoothed delivery's decaying maximum) sits above most baselines by
// more than UpGain: that is the scatter, no evidence for another up-probe
// (outOfScatter). The group's first up-probe (a start that queued less,
// its arms measured again while promising) is its only one in 120 s, and
// its first down-probe below the delayed-ACK pair too.
func TestQueueProbeScatterIsNoEvidence(t *testing.T) {
	noisy := scattered(func(float64) float64 { return 3e6 }, 0.1)
	if learned, up, down := runProbeFrom(t, noisy, []probeTick{{n: 4, delivery: 3e6}}, 0, 120*time.Second); learned != 2 || up > ProbePoolArms*probeEnd || down > ProbeEpochTicks {
		t.Errorf("flat medium scattered by ±10 %%: learned %v segments, %d evaluations probing up, %d down; want 2 and one probe each way (<= %d: its arms, and <= %d, held)", learned, up, down, ProbePoolArms*probeEnd, ProbeEpochTicks)
	}
}

func TestQueueProbeDescendsWhenQueueCostsThroughput(t *testing.T) {
	// A medium that loses throughput with queue (rate adaptation that takes
	// collisions of backlogged stations for a bad channel): from 64 segments
	// the down-probes are adopted while they cost nothing.
	medium := func(s float64) float64 { return 3e6 / (1 + s/64) }
	learned, _, _ := runProbe(t, medium, 3e6, true, 64, 60*time.Second)
	if learned > 8 {
		t.Errorf("learned %v segments, want the down-probes to reach <= 8", learned)
	}
	// A flat medium from too much queue: down-probes cost nothing either.
	flat := func(float64) float64 { return 3e6 }
	if learned, _, _ := runProbe(t, flat, 3e6, true, 64, 60*time.Second); learned > 4 {
		t.Errorf("flat medium from 64 segments: learned %v, want the down-probes to reach <= 4", learned)
	}
}

// Below the delayed-ACK pair only on a gain: a medium whose rate adaptation
// takes the collisions of backlogged stations for a bad channel (the lab's
// testbed2012 profile at 4 ms: 6 terminals carried 10.5–13.7 Mbit/s at 2
// segments per contender and 22.1 at 1, the same afternoon) is worth the
// step down; one that loses with less (the delayed ACK waits on a lone
// segment) or gains too little to tell from the scatter is not, and it is
// tried once.
func TestQueueProbeBelowTheDelayedACKPairOnlyOnAGain(t *testing.T) {
	below := func(lo, at2 float64) func(float64) float64 {
		return func(s float64) float64 {
			if s < 2 {
				return lo
			}
			return at2
		}
	}
	for _, c := range []struct {
		name   string
		medium func(float64) float64
		want   float64
	}{
		{"rate adaptation: twice the delivery at one segment", below(6e6, 3e6), 1},
		{"rate adaptation, scattered ±10 %: 30 % more at one segment", scattered(below(3.9e6, 3e6), 0.1), 1},
		{"the delayed ACK: 10 % less at one segment", below(2.7e6, 3e6), 2},
		{"2 % more at one segment: within UpGain", below(3.06e6, 3e6), 2},
	} {
		learned, _, down := runProbe(t, c.medium, 3e6, true, 0, 60*time.Second)
		if learned != c.want {
			t.Errorf("%s: learned %v segments, want %v", c.name, learned, c.want)
		}
		if c.want == 2 && down > ProbeEpochTicks {
			t.Errorf("%s: %d evaluations below, want one probe, held (<= %d)", c.name, down, ProbeEpochTicks)
		}
	}
}

func TestQueueProbeBacksOff(t *testing.T) {
	// A noisy-looking medium where probes never pay: the delivery of the
	// start (20 % above) keeps inviting up-probes, which fail; they must
	// back off to at most one epoch in ProbeMaxWait+1 after the first ones.
	flat := func(float64) float64 { return 3e6 }
	_, up, down := runProbe(t, flat, 3.6e6, true, 0, 120*time.Second)
	probing := up + down
	// 240 evaluations; an up-probe is probeEnd evaluations, the held one
	// below the pair ProbeEpochTicks. Waits 0,1,2,4,8,… epochs after
	// failures: probes at epochs 1,2,4,7,12,21 → at most 6, one of them
	// held. The start stays the evidence (no up-step is ever adopted
	// here: evidence), so they keep that pace.
	if max := 5*probeEnd + ProbeEpochTicks; probing > max {
		t.Errorf("%d evaluations at a probe's value in 120 s, want <= %d", probing, max)
	}
}

// ladderNoisyAtThePair is an aggregating medium whose delivery at the
// delayed-ACK pair scatters by sd per evaluation: 8 segments per
// contender carry 45 % more, 32 carry 77 % more.
func ladderNoisyAtThePair(sd float64, seed int64) func(float64) float64 {
	return stairs(seed, stair{0, 6.2e6, sd}, stair{8, 9e6, 0.08}, stair{32, 11e6, 0.06})
}

// stair is one step of a stairs medium: from segs segments per contender
// on, rate B/s, each evaluation's measure off by a normal scatter sd.
type stair struct{ segs, rate, sd float64 }

// stairs is a medium that delivers the rate of the highest of steps
// (ascending in segs) at or below the queue asked for, scattered by its
// sd (and never under 0.2 of it).
func stairs(seed int64, steps ...stair) func(float64) float64 {
	rng := rand.New(rand.NewSource(seed))
	return func(s float64) float64 {
		st := steps[0]
		for _, x := range steps[1:] {
			if s >= x.segs {
				st = x
			}
		}
		return st.rate * max(0.2, 1+st.sd*rng.NormFloat64())
	}
}

// A first step up rejected on the noise at the pair (its first look not
// out of a scattered baseline, or its tail check) does not hold the group
// there: the start, which delivered more at its deep queue, stays the
// evidence for another up-probe until one is adopted (evidence). With the
// evidence decaying, a group whose pair scatters by ± 20 % stayed at the
// pair in 7 of 40 minutes.
func TestQueueProbeClimbsAfterANoisyFirstStep(t *testing.T) {
	const seeds = 40
	stuck := 0
	for seed := int64(1); seed <= seeds; seed++ {
		if learned, _, _ := runProbeFrom(t, ladderNoisyAtThePair(0.2, seed), []probeTick{{n: 4, delivery: 9e6}}, 0, 60*time.Second); learned <= 2 {
			stuck++
		}
	}
	t.Logf("pair scattered by ± 20 %%: stayed at the pair in %d of %d minutes", stuck, seeds)
	if stuck > seeds/20 {
		t.Errorf("the group stayed at the pair in %d of %d minutes, want <= %d", stuck, seeds, seeds/20)
	}
}

func TestQueueProbeVoidedAndRestarted(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const period = 500 * time.Millisecond
	bites := func(float64) bool { return true }
	medium := aggregating(54e6, 8, 64)
	var q queueProbe
	q.observe(cp, t0, period, probeTick{n: 4, delivery: medium(64), deep: true}, bites)
	now := t0
	for i := 0; i < 40; i++ {
		now = now.Add(period)
		// Every fourth evaluation is not at the group's working point:
		// every epoch has one, so no probe is ever judged.
		q.observe(cp, now, period, probeTick{n: 4, delivery: medium(q.current(cp)), eligible: i%4 != 3}, bites)
	}
	if l := q.learned(cp); l != 2 {
		t.Errorf("with every epoch voided: learned %v, want 2", l)
	}
	// A group whose size changes every evaluation never has a baseline.
	for i := 0; i < 40; i++ {
		now = now.Add(period)
		q.observe(cp, now, period, probeTick{n: 4 + i%2, delivery: medium(q.current(cp)), eligible: true}, bites)
		if q.current(cp) != q.learned(cp) {
			t.Fatalf("probing while the group changes size every evaluation")
		}
	}
}

// fluidAggregating is the fluid model (fluid) on a medium whose service rate
// grows with the queue per station (aggregating): the queueing delay d
// solves S(d) = rate(Q/(n·mss)) with S(d) = Σ w·mss/(base+d) and Q = d·S(d).
func fluidAggregating(w []float64, bases []time.Duration, rate func(float64) float64, mss float64) ([]float64, float64) {
	n := float64(len(w))
	at := func(d float64) ([]float64, float64, float64) {
		x := make([]float64, len(w))
		var s float64
		for i := range w {
			x[i] = w[i] * mss / (bases[i].Seconds() + d)
			s += x[i]
		}
		return x, s, rate(d * s / (n * mss))
	}
	lo, hi := 0.0, 1.0
	for _, s, c := at(hi); s > c; _, s, c = at(hi) {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if _, s, c := at(mid); s > c {
			lo = mid
		} else {
			hi = mid
		}
	}
	x, _, _ := at(hi)
	return x, hi
}

// TestCoopAggregationFluid closes the loop on an aggregating medium: four
// terminals at 4 ms, a medium whose peak (full 64-MPDU aggregates) is 12 MB/s
// and whose fixed cost per access is 8 frames. With two segments per
// contender coop holds the medium at a fraction of that; with the queue
// probe it must reach 80 % of the peak within 50 s, stay fair, and hold a
// queue far below what an unbounded sender builds (CUBIC fills the AP's 1000
// frames: seconds).
//
// The elasticity test is off in both runs: in this model the delay of a
// round of small aggregates does not depend on the windows at all (the
// medium slows down exactly as much as the queue falls), which the test
// cannot tell from someone else's queue, and it gives the bounds up within
// 2 s. The lab's 802.11ac medium (heterogeneous preset, docs/results.md)
// did not do that in any run; a medium that did would cost coop its bounds,
// not its throughput.
func TestCoopAggregationFluid(t *testing.T) {
	medium := aggregating(12e6, 8, 64)
	fixed, _, _, _ := runAggregating(t, Params{Coop: CoopParams{DisableQueueProbe: true, DisableSwitchOff: true}}, medium)
	sum, d, jain, _ := runAggregating(t, Params{Coop: CoopParams{DisableSwitchOff: true}}, medium)
	peak := medium(64)
	t.Logf("two segments per contender: %.2f MB/s; with the probe %.2f MB/s (%.0f %% of %.2f), queue %.1f ms, Jain %.4f", fixed/1e6, sum/1e6, 100*sum/peak, peak/1e6, d*1e3, jain)
	if fixed > 0.6*peak {
		t.Fatalf("the model does not need the probe: %.2f MB/s without it", fixed/1e6)
	}
	if sum < 0.8*peak {
		t.Errorf("with the probe %.2f MB/s, want >= 80 %% of %.2f", sum/1e6, peak/1e6)
	}
	if jain < 0.98 {
		t.Errorf("Jain %.4f < 0.98", jain)
	}
	if d > 0.1 || math.IsNaN(d) {
		t.Errorf("queue %.1f ms, want <= 100 ms", d*1e3)
	}
}

// TestCoopAggregationFluidWhole is the same loop with all of coop on (the
// elasticity test too) on a medium whose fixed cost per access is 2 frames,
// so that its delay does follow the windows: no decision may be in
// competitive mode, and the group must reach 90 % of the peak.
func TestCoopAggregationFluidWhole(t *testing.T) {
	medium := aggregating(12e6, 2, 64)
	sum, d, jain, competing := runAggregating(t, Params{}, medium)
	t.Logf("%.2f MB/s of %.2f, queue %.1f ms, Jain %.4f, %d decisions competing", sum/1e6, medium(64)/1e6, d*1e3, jain, competing)
	if competing > 0 {
		t.Errorf("%d decisions in competitive mode: every terminal cooperates", competing)
	}
	if sum < 0.9*medium(64) || jain < 0.98 {
		t.Errorf("%.2f MB/s (Jain %.4f), want >= 90 %% of %.2f and Jain >= 0.98", sum/1e6, jain, medium(64)/1e6)
	}
}

// runAggregating runs four coop terminals at 4 ms for 60 s on the medium,
// each hearing the others' rates and learned queue per contender, and
// returns the last step's aggregate (B/s), queue (s) and Jain index, and
// how many decisions were in competitive mode.
func runAggregating(t *testing.T, p Params, medium func(float64) float64) (sum, d, jain float64, competing int) {
	r := runAggregatingGroup(t, p, medium, groupOpts{})
	return r.sum, r.d, r.jain, r.competing
}

// groupOpts vary runAggregatingGroup: ids gives the terminals sender ids
// (1, 2, …) and their peers' announced probe plans, so that the group
// follows its probe leader; noise scales each peer's reported rate, in
// each terminal's view of it, by an independent factor in [1 − noise,
// 1 + noise] per step (views that differ, as under oscillating rate
// adaptation).
type groupOpts struct {
	ids   bool
	noise float64
	seed  int64
}

type groupRun struct {
	sum, d, jain float64
	// late is the group's mean delivery over the run's second half (B/s):
	// where a probe's walk left it, as a user sees it, not one step's.
	late      float64
	competing int
	// splits counts the steps at which the terminals' windows used
	// different queues per contender.
	splits int
}

func runAggregatingGroup(t *testing.T, p Params, medium func(float64) float64, o groupOpts) groupRun {
	const mss = 1448.0
	bases := []time.Duration{4 * time.Millisecond, 4 * time.Millisecond, 4 * time.Millisecond, 4 * time.Millisecond}
	pols := make([]*coop, len(bases))
	w := make([]float64, len(bases))
	for i := range pols {
		pols[i], w[i] = newCoopT(t, p), 10
	}
	cp := p.Coop.Defaults()
	rng := rand.New(rand.NewSource(o.seed))
	var r groupRun
	var x []float64
	const steps = 120
	for step := 0; step < steps; step++ {
		x, r.d = fluidAggregating(w, bases, medium, mss)
		if step >= steps/2 {
			for _, v := range x {
				r.late += v / (steps - steps/2)
			}
		}
		now := t0.Add(time.Duration(step) * 500 * time.Millisecond)
		for i := range pols {
			var ps []PeerView
			for j := range pols {
				if j != i {
					pv := PeerView{ActiveFlows: 1, SRTT: bases[j] + secs(r.d), MinRTT: bases[j], DeliveryRate: x[j] * (1 + o.noise*(2*rng.Float64()-1)),
						QueueSegments: pols[j].last.QueueSegments}
					if o.ids {
						pv.ID, pv.Plan = uint64(j+1), pols[j].last.Plan
					}
					ps = append(ps, pv)
				}
			}
			v := View{Now: now, Peers: ps, Flows: []FlowView{{Dst: dstA, MSS: mss, SRTT: bases[i] + secs(r.d), MinRTT: bases[i], DeliveryRate: x[i]}}}
			if o.ids {
				v.ID = uint64(i + 1)
			}
			dec := pols[i].Decide(v)
			if strings.Contains(dec.Reason, "competing") {
				r.competing++
			}
			if hi := dec.PerDst[dstA].Hi; hi == 0 {
				w[i] *= 1.5
			} else {
				w[i] = float64(hi)
			}
		}
		for i := range pols[1:] {
			if pols[i+1].probe.current(cp) != pols[0].probe.current(cp) {
				r.splits++
				break
			}
		}
	}
	for _, v := range x {
		r.sum += v
	}
	r.jain, _ = fairness.Jain(x)
	return r
}

// TestCoopGroupFollowsOneProbe: four terminals whose views of each
// other's delivery differ by up to ± 30 % per step (the lab's testbed2012
// profile at 4 ms, six terminals: the same probe read × 0.39 on two and
// × 1.31 on four, docs/results.md) split their queue per contender when
// each judges the group's probe itself — and never when they follow the
// one with the lowest id, which still climbs the aggregating medium's knee
// (over the minute's second half: under views this noisy a down-probe
// from the knee is now and then adopted on a reading within the 2 % it
// may lose, a step's walk that one step's sum would take for the group's).
func TestCoopGroupFollowsOneProbe(t *testing.T) {
	medium := aggregating(12e6, 8, 64)
	p := Params{Coop: CoopParams{DisableSwitchOff: true}}
	var alone, led int
	for seed := int64(1); seed <= 5; seed++ {
		each := runAggregatingGroup(t, p, medium, groupOpts{noise: 0.3, seed: seed})
		one := runAggregatingGroup(t, p, medium, groupOpts{ids: true, noise: 0.3, seed: seed})
		t.Logf("seed %d: each its own verdict %d split steps, %.2f MB/s; led %d, %.2f MB/s (Jain %.4f) of %.2f", seed, each.splits, each.late/1e6, one.splits, one.late/1e6, one.jain, medium(64)/1e6)
		alone += each.splits
		led += one.splits
		if one.late < 0.8*medium(64) || one.jain < 0.98 {
			t.Errorf("seed %d: led, %.2f MB/s over the second half (Jain %.4f), want >= 80 %% of %.2f and Jain >= 0.98", seed, one.late/1e6, one.jain, medium(64)/1e6)
		}
	}
	if led != 0 {
		t.Errorf("led by one terminal the group's queues per contender differed at %d steps, want 0", led)
	}
	if alone == 0 {
		t.Errorf("the views' noise split no group that judged for itself: the test shows nothing")
	}
}

// agree: the group converges on the upper median of the advertised values,
// only once every terminal has judged the epoch's probe, and one peer
// cannot move it out of the clamp.
func TestQueueProbeAgree(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const period = 500 * time.Millisecond
	epoch := time.Duration(ProbeEpochTicks) * period
	start := t0.Truncate(epoch).Add(epoch) // an epoch boundary
	early, late := start.Add(period), start.Add(probeAgree*period)
	peers := func(vs ...uint32) []PeerView {
		var ps []PeerView
		for _, v := range vs {
			ps = append(ps, PeerView{ActiveFlows: 1, QueueSegments: v})
		}
		return ps
	}
	for _, tc := range []struct {
		name  string
		own   float64
		at    time.Time
		peers []PeerView
		want  float64
	}{
		{"majority above", 8, late, peers(32, 32, 32), 32},
		{"majority below: the one that adopted alone goes back", 32, late, peers(8, 8, 8), 8},
		{"tie: the larger", 8, late, peers(32, 32, 8), 32},
		{"before every verdict is in", 8, early, peers(32, 32, 32), 8},
		{"no peer advertises", 8, late, peers(0, 0), 8},
		{"one peer far out is clamped and outvoted", 8, late, peers(8, 8, 4_000_000_000), 8},
		{"two far out: clamped to the probe's maximum", 8, late, peers(65535, 65535, 8), ProbeMaxSegments},
		{"a majority at one segment (adopted below QueueSegments)", 2, late, peers(1, 1, 1), ProbeMinSegments},
	} {
		q := queueProbe{segs: tc.own, best: 1e6, peak: 2e6}
		q.agree(cp, tc.at, period, tc.peers)
		if got := q.learned(cp); got != tc.want {
			t.Errorf("%s: learned %v, want %v", tc.name, got, tc.want)
		}
		// A value the group adopted is an adopted probe: the start's peak
		// is no longer the evidence for another up-probe (evidence).
		moved, want := q.learned(cp) != tc.own, 2e6
		if moved {
			want = 1e6
		}
		if got := q.evidence(); got != want {
			t.Errorf("%s: evidence %v after the learned value moved %v, want %v", tc.name, got, moved, want)
		}
	}
}

// A terminal that agree moves takes the majority's verdict into its
// schedule: after the group adopted an up-probe it rejected, it probes up
// with the group in the next epoch; the group's baseline is not voided.
func TestQueueProbeAgreeSyncsTheSchedule(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const period = 500 * time.Millisecond
	epoch := time.Duration(ProbeEpochTicks) * period
	start := t0.Truncate(epoch).Add(epoch)
	q := queueProbe{segs: 8, next: -1, wait: 2, backoff: 4, triedUp: true, steady: 20}
	q.agree(cp, start.Add(probeAgree*period), period, []PeerView{{QueueSegments: 32}, {QueueSegments: 32}, {QueueSegments: 32}})
	if q.learned(cp) != 32 || q.next != 1 || q.wait != 0 || q.triedUp || q.steady != 20 {
		t.Errorf("after the group's adoption: %+v, want 32 segments, next up, no wait, baseline kept", q)
	}
	q = queueProbe{segs: 32, next: 1, steady: 20}
	q.agree(cp, start.Add(probeAgree*period), period, []PeerView{{QueueSegments: 8}, {QueueSegments: 8}, {QueueSegments: 8}})
	if q.learned(cp) != 8 || q.next != -1 || !q.triedUp {
		t.Errorf("after the group's rejection: %+v, want 8 segments, next down, up tried", q)
	}
}

// While the group probes (in an epoch's first probeAgree evaluations, at
// the working point, on a path where a probe moves the target, the group's
// windows risen by more than a quarter) the elasticity test pauses: a
// terminal that does not probe while its peers do sees their queue rise and
// must not take it for someone else's (lab, heterogeneous 100 Mbit/s,
// 2026-11-26). The same trace with the probe disabled (so never paused)
// gets the verdict: the test can see it.
func TestCoopPausesTheElasticityTestWhileTheGroupProbes(t *testing.T) {
	base := 4 * time.Millisecond
	type tick struct {
		q        time.Duration
		peerCwnd uint32
	}
	// The peers' up-probe: their windows and their queue for 3.5 s.
	probe := []tick{{4 * time.Millisecond, 30}}
	for range 6 {
		probe = append(probe, tick{30 * time.Millisecond, 90})
	}
	// The same probe with the peers' windows reported a status interval
	// late: for two evaluations the queue grows at windows that look held.
	unseen := []tick{{8 * time.Millisecond, 30}, {12 * time.Millisecond, 30}}
	for range 5 {
		unseen = append(unseen, tick{30 * time.Millisecond, 90})
	}
	run := func(p Params, during []tick) (verdicts int, paused bool) {
		c := newCoopT(t, p)
		view := func(now time.Time, q time.Duration, peerCwnd uint32) View {
			v := View{Now: now, Flows: []FlowView{{Dst: dstA, MSS: 1448, Cwnd: 30, SRTT: base + q, MinRTT: base, DeliveryRate: 0.75e6}}}
			for range 3 {
				v.Peers = append(v.Peers, PeerView{ActiveFlows: 1, SRTT: base + q, MinRTT: base, DeliveryRate: 0.75e6, Cwnd: peerCwnd, Hi: peerCwnd})
			}
			return v
		}
		now := t0 // an epoch boundary (epochs are 5 s of wall clock)
		step := func(q time.Duration, peerCwnd uint32) {
			why := c.Decide(view(now, q, peerCwnd)).Reason
			if strings.Contains(why, "competing (no upper bound) for") {
				verdicts++
			}
			paused = paused || strings.Contains(why, "elasticity test paused: the windows under bounds rose")
			now = now.Add(500 * time.Millisecond)
		}
		step(20*time.Millisecond, 30) // the first estimate, from the uncontrolled start's queue
		for now.Before(t0.Add(15 * time.Second)) {
			step(4*time.Millisecond, 30) // at the working point: a baseline, no probe of its own
		}
		for _, k := range during {
			step(k.q, k.peerCwnd)
		}
		for now.Before(t0.Add(30 * time.Second)) {
			step(4*time.Millisecond, 30)
		}
		return verdicts, paused
	}
	for name, during := range map[string][]tick{"windows seen": probe, "windows seen a status interval late": unseen} {
		if n, _ := run(Params{}, during); n != 0 {
			t.Errorf("%s: %d verdicts while the peers probed", name, n)
		}
		if n, _ := run(Params{Coop: CoopParams{DisableQueueProbe: true}}, during); n == 0 {
			t.Errorf("%s: with the probe off the same queue gave no verdict: the test does not exercise the pause", name)
		}
	}
	if _, paused := run(Params{}, probe); !paused {
		t.Error("the peers' windows rose in their probe: no decision named the pause")
	}
}

// A group whose estimate is still ramping up after its first measurement
// (the bottleneck idle: a queue of a quarter of the target or less, the
// estimate rising tick by tick) is not at its working point: its delivery
// rises because the windows grow into the medium, and an up-probe judged
// against it is credited with the ramp. Ten coop terminals at 256 ms on
// 802.11g (lab, default, 2026-11-26): the first estimate 996 kB/s in the
// slow start, the group's delivery 1.26–1.75 MB/s in the epoch's last
// evaluations at a queue of 2–5 ms, then a probe 2 → 8 segments per
// contender "gained" ×1.57–1.87 (the delivery reached the medium's 2.9 MB/s)
// and was adopted; the next took 32 (a target queue of 168 ms), and the p95
// RTT of the run was 439 ms against 317 in the two others.
func TestQueueProbeNotDuringTheRamp(t *testing.T) {
	const n, mss = 10, 1448.0
	base := 256 * time.Millisecond
	c := newCoopT(t, Params{})
	view := func(now time.Time, q time.Duration, group float64) View {
		v := View{Now: now, Flows: []FlowView{{Dst: dstA, MSS: mss, Cwnd: 60, SRTT: base + q, MinRTT: base, DeliveryRate: group / n}}}
		for range n - 1 {
			p := inflatedPeer(base, q, group/n)
			p.Cwnd = 60
			v.Peers = append(v.Peers, p)
		}
		return v
	}
	// The first estimate 2 s into an epoch (1 MB/s, a queue of 52 ms), then
	// the ramp at an idle bottleneck: the group's delivery rising to the
	// medium's 2.9 MB/s over the rest of the epoch and into the next.
	now := t0.Add(2 * time.Second)
	c.Decide(view(now, 52*time.Millisecond, 1.0e6))
	ramp := []float64{1.25e6, 1.5e6, 1.75e6, 1.9e6, 2.0e6, 2.3e6, 2.5e6, 2.7e6, 2.8e6, 2.9e6, 2.9e6, 2.9e6}
	for i, m := range ramp {
		now = now.Add(500 * time.Millisecond)
		d := c.Decide(view(now, time.Duration(2+i%3)*time.Millisecond, m))
		if c.probe.probing(c.p.Coop) || c.probe.learned(c.p.Coop) != float64(c.p.Coop.QueueSegments) {
			t.Fatalf("%v into the ramp: queue probe at %v segments per contender (learned %v): %s",
				now.Sub(t0), c.probe.current(c.p.Coop), c.probe.learned(c.p.Coop), d.Reason)
		}
	}
}

// TestCoopProbesAJudgedQueueOnlyOnceProvedOurs: two terminals at 256 ms
// whose queue sits at 80 ms, 2.1 × the target — above OffRatio × it, so
// the elasticity test is judging it, and inside the span where a queue the
// group owns may be probed. Beside hosts without coopcc more queue pays (a
// larger share of their medium), and a probe adopted there raised the
// target over the hosts' queue before the verdict (lab, coexistence,
// 2026-11-26). Until the queue has proved the group's own no probe runs;
// once it has, one does.
func TestCoopProbesAJudgedQueueOnlyOnceProvedOurs(t *testing.T) {
	for _, proved := range []bool{false, true} {
		c := newCoopT(t, Params{})
		cp := c.p.Coop
		c.capacity, c.comp.ours = 400e3, proved
		self := terminal{base: 256 * time.Millisecond, queue: 80 * time.Millisecond, rate: 200e3}
		g := group{terms: []terminal{self, self}, rbar: 0.256, d: 0.080, measured: 400e3}
		dStar := c.targetQueue(g, 1448, c.capacity, c.probe.current(cp))
		if g.d <= cp.OffRatio*dStar || g.d > probeQueueSpan*cp.OffRatio*dStar {
			t.Fatalf("queue %.0f ms against a target of %.1f ms: not between OffRatio × and the span", g.d*1e3, dStar*1e3)
		}
		probed := false
		for i := 0; i < 40; i++ {
			c.observeProbe(t0.Add(time.Duration(i)*500*time.Millisecond), g, 1448, dStar, true, false)
			probed = probed || c.probe.probing(cp)
		}
		if probed != proved {
			t.Errorf("queue proved the group's %v: probed %v", proved, probed)
		}
	}
}

// A terminal that may not probe in an epoch itself (a tick of the epoch
// before was above the probe's span, so it has no baseline) still pauses
// its elasticity test while its peers probe: ten coop terminals at 4 ms
// (lab, scalability --quick, 2026-11-27) split five and five at an epoch's
// start, the five that probed raised their windows from 5 to 11 segments and
// the queue from 23 to 41 ms, and the five that did not took that queue for
// someone else's and switched off; the others followed them off.
func TestCoopPausesForAPeersProbeWithoutABaselineOfItsOwn(t *testing.T) {
	base := 4 * time.Millisecond
	run := func(p Params, voided, competing bool) (verdicts int) {
		c := newCoopT(t, p)
		now := t0 // an epoch boundary (epochs are 5 s of wall clock)
		step := func(q time.Duration, peerCwnd uint32) {
			v := View{Now: now, Flows: []FlowView{{Dst: dstA, MSS: 1448, Cwnd: 30, SRTT: base + q, MinRTT: base, DeliveryRate: 0.75e6}}}
			for range 3 {
				hi := peerCwnd
				if competing && peerCwnd > 30 {
					hi = 0 // no upper bound: the peers' own CUBIC grows
				}
				v.Peers = append(v.Peers, PeerView{ActiveFlows: 1, SRTT: base + q, MinRTT: base, DeliveryRate: 0.75e6, Cwnd: peerCwnd, Hi: hi})
			}
			if strings.Contains(c.Decide(v).Reason, "competing (no upper bound) for") {
				verdicts++
			}
			now = now.Add(500 * time.Millisecond)
		}
		step(20*time.Millisecond, 30) // the first estimate, from the uncontrolled start's queue
		for now.Before(t0.Add(14500 * time.Millisecond)) {
			step(4*time.Millisecond, 30)
		}
		if voided {
			step(30*time.Millisecond, 30) // the epoch's last tick: no baseline for the next
		} else {
			step(4*time.Millisecond, 30)
		}
		step(4*time.Millisecond, 30) // the probe epoch's first evaluation
		for range 6 {
			step(30*time.Millisecond, 90) // the peers' up-probe
		}
		for now.Before(t0.Add(30 * time.Second)) {
			step(4*time.Millisecond, 30)
		}
		return verdicts
	}
	for _, voided := range []bool{false, true} {
		if n := run(Params{}, voided, false); n != 0 {
			t.Errorf("baseline voided %v: %d verdicts while the peers probed", voided, n)
		}
	}
	if n := run(Params{Coop: CoopParams{DisableQueueProbe: true}}, true, false); n == 0 {
		t.Error("with the probe off the same queue gave no verdict: the test does not exercise the pause")
	}
	// Peers in competitive mode whose windows grow are no probe: the
	// queue they build gets its verdict.
	if n := run(Params{}, true, true); n == 0 {
		t.Error("peers without bounds grew their windows and the queue, and the test paused for them")
	}
}

// TestCoopWindowsSizedForTheHostsQueueAreNoProbe: beside hosts whose queue
// grows far above the target (ten times and more), the group's windows,
// sized for the queue as it is, rise with it; no terminal probes at such a
// queue, so that is no probe to pause the elasticity test for (groupProbing),
// and the verdict comes (lab, papers/004's coexistence-2012, 2026-11-28: paused
// in every epoch, one terminal's first verdict 73 s into the run).
func TestCoopWindowsSizedForTheHostsQueueAreNoProbe(t *testing.T) {
	c := newCoopT(t, Params{})
	base := 256 * time.Millisecond
	const rate = 150e3
	now := t0.Add(3 * time.Second) // an epoch boundary falls 2 s in
	verdictAt := -1.0
	cwnd := uint32(100)
	for s := 0.0; s < 30; s += 0.5 {
		q := secs(0.4 + 0.2*s) // the hosts' queue, growing
		// The peer's windows are sized for the queue as it is once its
		// cut is in force (windowQueue): they jump with it (lab: hi 92 →
		// 182 in a tick), here at an epoch's start.
		peer := uint32(50)
		if s >= 2.5 {
			peer = uint32(rate * (base + q).Seconds() / 1448)
		}
		v := View{Now: now, Flows: []FlowView{{Dst: dstA, MSS: 1448, Cwnd: cwnd, SRTT: base + q, MinRTT: base, DeliveryRate: rate}},
			Peers: []PeerView{{ActiveFlows: 1, SRTT: base + q, MinRTT: base, DeliveryRate: rate, Cwnd: peer, Hi: peer}}}
		d := c.Decide(v)
		if strings.Contains(d.Reason, "elasticity test paused: the windows under bounds rose") {
			t.Fatalf("t=%.1f: paused for a probe at a queue of %v: %s", s, q, d.Reason)
		}
		if d.Mode == ModeCompeting {
			verdictAt = s
			break
		}
		cwnd = d.PerDst[dstA].Hi // the windows at their bounds, own and the peer's alike
		now = now.Add(500 * time.Millisecond)
	}
	if verdictAt < 0 || verdictAt > 10 {
		t.Fatalf("verdict at %.1f s (-1 = none in 30 s) on a queue that grew from 0.4 s while the group cut, want it within 10 s", verdictAt)
	}
}

// loneShortPath runs coop for one terminal alone on a 4 ms path of a medium
// that gains nothing from queue (fluid, 3.02 MB/s, each evaluation's
// delivery ±1 % off it) for 60 s, from a slow start 10 ms deep whose first
// evaluation carried the kernel's one-ACK rate sample, 4 % above the
// medium (sampled: the agent says so). It returns the evaluations whose
// upper bound was at least 1.5 × the last one: an up-probe's.
func loneShortPath(t *testing.T, sampled bool) (probing int) {
	const c0, mss, step = 3.02e6, 1448.0, 500 * time.Millisecond
	base := 4250 * time.Microsecond
	p := newCoopT(t, Params{})
	w, his := []float64{30}, []uint32{}
	for i := 0; i < 120; i++ {
		x, d := fluid(w, []time.Duration{base}, c0, mss)
		f := FlowView{Dst: dstA, MSS: mss, Cwnd: uint32(w[0]), SRTT: base + secs(d), MinRTT: base, DeliveryRate: x[0] * (1 + 0.01*float64(1-2*(i%2)))}
		if i == 0 {
			f.DeliveryRate, f.RateSampled = 1.06*c0, sampled
		}
		dec := p.Decide(View{Now: t0.Add(time.Duration(i) * step), Air: fluidAir(x, 0, d, c0), Flows: []FlowView{f}})
		if b := dec.PerDst[dstA]; dec.Active && b.Hi > 0 {
			w[0] = float64(b.Hi) // the kernel's CUBIC keeps its window at the bound at 4 ms
			his = append(his, b.Hi)
		}
	}
	last := his[len(his)-1]
	for _, hi := range his[4:] {
		if float64(hi) >= 1.5*float64(last) {
			probing++
		}
	}
	return probing
}

// TestCoopLoneStartSampleIsNoGain: the lab's lone terminal at 4 ms (4 of 6
// runs probed up for nothing, TestQueueProbeCreditedStartIsAMeasuredGain)
// through Decide: the agent's RateSampled reaches the queue probe, and with
// it the start's sample is not taken for a gain.
func TestCoopLoneStartSampleIsNoGain(t *testing.T) {
	if n := loneShortPath(t, true); n != 0 {
		t.Errorf("start's rate marked sampled: %d evaluations at an up-probe's bound, want none", n)
	}
	if n := loneShortPath(t, false); n == 0 {
		t.Errorf("the same start's rate taken for an evaluation's: no up-probe; the test no longer sees the start's credit")
	}
}

// TestCoopCollisionsFluid closes the loop on a medium that carries less the
// more every station has queued (rate adaptation that reads the collisions
// of backlogged stations as a bad channel: the lab's testbed2012 profile,
// where 6 terminals at 4 ms carried 10.5–13.7 Mbit/s at 2 segments per
// contender and 22.1 at 1): the queue probe must find the step below the
// delayed-ACK pair and hold it, the group fair and its queue smaller.
func TestCoopCollisionsFluid(t *testing.T) {
	medium := func(a float64) float64 { return 3e6 / (1 + max(a, 0)/4) }
	fixed, dFixed, _, _ := runAggregating(t, Params{Coop: CoopParams{DisableQueueProbe: true, DisableSwitchOff: true}}, medium)
	sum, d, jain, _ := runAggregating(t, Params{Coop: CoopParams{DisableSwitchOff: true}}, medium)
	t.Logf("two segments per contender: %.2f MB/s at a queue of %.1f ms; with the probe %.2f MB/s at %.1f ms, Jain %.4f", fixed/1e6, dFixed*1e3, sum/1e6, d*1e3, jain)
	if sum < 1.1*fixed {
		t.Errorf("with the probe %.2f MB/s, want >= 1.1 × the %.2f of two segments per contender", sum/1e6, fixed/1e6)
	}
	if d >= dFixed || jain < 0.98 {
		t.Errorf("queue %.1f ms (two segments: %.1f), Jain %.4f: want a smaller queue and Jain >= 0.98", d*1e3, dFixed*1e3, jain)
	}
}

// adapting is a medium whose rate adaptation answers the queue slowly: the
// delivery relaxes towards at1 below the delayed-ACK pair and at2 from it
// on with a time constant tau, and every evaluation's measure of it is off
// by a normal scatter of sigma (seeded). The lab's testbed2012 profile
// (ARF) at 4 ms: one segment per contender fixed by hand carried 1.24–1.66
// × what two did for N = 4–6, and the group's delivery scattered by ±10–40
// % from one evaluation to the next (docs/results.md, twenty-eighth session).
func adapting(at1, at2 float64, tau time.Duration, sigma float64, seed int64) func(float64) float64 {
	rng := rand.New(rand.NewSource(seed))
	const period = 500 * time.Millisecond
	k := 1 - math.Exp(-float64(period)/float64(tau))
	r := at2
	return func(s float64) float64 {
		target := at2
		if s < 2 {
			target = at1
		}
		r += k * (target - r)
		return r * max(0.2, 1+sigma*rng.NormFloat64())
	}
}

// A probe below the delayed-ACK pair holds its epoch, and a promising one
// is measured again (heldProbe, ProbePoolArms). On a medium whose rate
// adaptation needs seconds to answer and whose delivery scatters by ±15 %
// per evaluation, one segment per contender worth 1.35 × is found in half
// the 60 s runs or more (11 of these 20 seeds; the 2.5 s probe of the code
// before, judged by 2 standard errors, found it in 4: its arms read the
// adaptation's lag); where one segment gains nothing, the pooled arms adopt
// it in at most 1 of 20 (none here; judged by 2 standard errors they did
// in 3), and the time spent below is bounded.
func TestQueueProbeHeldBelowThePairUnderSlowRateAdaptation(t *testing.T) {
	const seeds = 20
	found, falsely, worst := 0, 0, 0
	for seed := int64(1); seed <= seeds; seed++ {
		if learned, _, _ := runProbe(t, adapting(4.05e6, 3e6, 3*time.Second, 0.15, seed), 3e6, true, 0, 60*time.Second); learned == 1 {
			found++
		}
		learned, _, down := runProbe(t, adapting(3e6, 3e6, 3*time.Second, 0.15, seed), 3e6, true, 0, 60*time.Second)
		if learned == 1 {
			falsely++
		}
		worst = max(worst, down)
	}
	if found < seeds/2 {
		t.Errorf("one segment worth 1.35 ×: found in %d of %d runs, want >= %d", found, seeds, seeds/2)
	}
	if falsely > seeds/20 {
		t.Errorf("one segment worth nothing: adopted in %d of %d runs, want <= %d", falsely, seeds, seeds/20)
	}
	if worst > ProbePoolArms*ProbeEpochTicks {
		t.Errorf("one segment worth nothing: %d evaluations below in a run, want <= %d (every arm held)", worst, ProbePoolArms*ProbeEpochTicks)
	}
}

// A promising held probe's next arm may come up to probePoolGap epochs
// later: the epoch after a held probe has no baseline, and under ARF (lab,
// twenty-ninth session) the one after it often had none either, and the
// pool of × 1.3–1.6 expired. Past the gap it is dropped, and a probe below
// the pair once tried needs the lost-delivery evidence again.
func TestQueueProbePoolWaitsForItsNextArm(t *testing.T) {
	cp := CoopParams{}.Defaults()
	bites := func(float64) bool { return true }
	const e = int64(1000)
	for _, c := range []struct {
		gap  int64
		want bool
	}{{2, true}, {3, true}, {probePoolGap, true}, {probePoolGap + 1, false}} {
		q := queueProbe{n: 4, epoch: e + c.gap - 1, steady: ProbeEpochTicks, tail: []float64{3e6, 3.1e6, 2.9e6},
			best: 3e6, next: -1, triedUp: true, triedBelow: true,
			pool: probePool{from: 2, to: 1, epoch: e, arms: 1, base: []float64{3e6, 3e6, 3e6}, probe: []float64{3.5e6, 3.5e6, 3.5e6, 3.5e6, 3.5e6}}}
		q.startEpoch(cp, e+c.gap, bites)
		if got := q.dir < 0 && q.hold && q.pool.arms == 1; got != c.want {
			t.Errorf("next arm %d epochs after the last: held probe below with the pool %v (dir %d, hold %v, arms %d), want %v", c.gap, got, q.dir, q.hold, q.pool.arms, c.want)
		}
	}
}

// The leader is the lowest id among the peers that advertise a learned
// value; a terminal with a lower id of its own leads; a peer without an id
// or a value takes no part, and a group where none takes part keeps the
// majority rule.
func TestProbeLeader(t *testing.T) {
	peers := []PeerView{{ID: 9, QueueSegments: 2}, {ID: 3, QueueSegments: 8}, {ID: 1}, {QueueSegments: 4}}
	for _, c := range []struct {
		self        uint64
		leader      uint64
		follow, ids bool
	}{{self: 5, leader: 3, follow: true, ids: true}, {self: 2, leader: 3, ids: true}, {self: 0, leader: 3, follow: true, ids: true}} {
		l, follow, ids := probeLeader(c.self, peers)
		if l.ID != c.leader || follow != c.follow || ids != c.ids {
			t.Errorf("self %d: leader %d follow %v ids %v, want %d %v %v", c.self, l.ID, follow, ids, c.leader, c.follow, c.ids)
		}
	}
	if _, follow, ids := probeLeader(5, []PeerView{{QueueSegments: 4}, {ID: 1}}); follow || ids {
		t.Errorf("no peer with an id and a value: follow %v ids %v, want neither", follow, ids)
	}
}

// A follower takes the leader's learned value, and its plan's only in the
// epoch the plan names, for as long as the leader announces it (until it
// has judged it). What a leader sends is clamped like any peer's value.
func TestQueueProbeFollowsTheLeadersPlan(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const period = probePeriod
	at := atEpoch
	var q queueProbe
	for _, c := range []struct {
		name  string
		now   time.Time
		l     PeerView
		want  float64
		learn float64
	}{
		{"no plan", at(1000, 0), PeerView{QueueSegments: 8}, 8, 8},
		{"an up-probe, its phase", at(1000, probeEnd-1), PeerView{QueueSegments: 8, Plan: ProbePlan{Epoch: 1000, Segments: 32}}, 32, 8},
		{"an up-probe past its phase, not yet judged (still announced)", at(1000, probeEnd), PeerView{QueueSegments: 8, Plan: ProbePlan{Epoch: 1000, Segments: 32}}, 32, 8},
		{"an up-probe judged: no longer announced", at(1000, probeEnd), PeerView{QueueSegments: 8}, 8, 8},
		{"a plan for the next epoch", at(1000, ProbeEpochTicks-1), PeerView{QueueSegments: 8, Plan: ProbePlan{Epoch: 1001, Segments: 2}}, 8, 8},
		{"a held probe, late in its epoch", at(1001, ProbeEpochTicks-1), PeerView{QueueSegments: 2, Plan: ProbePlan{Epoch: 1001, Segments: 1}}, 1, 2},
		{"a value out of the clamp", at(1002, 1), PeerView{QueueSegments: 65535, Plan: ProbePlan{Epoch: 1002, Segments: 65535}}, ProbeMaxSegments, ProbeMaxSegments},
	} {
		q.follow(cp, c.now, period, c.l)
		if got, learned := q.current(cp), q.learned(cp); got != c.want || learned != c.learn {
			t.Errorf("%s: windows at %.0f segments per contender (learned %.0f), want %.0f (%.0f)", c.name, got, learned, c.want, c.learn)
		}
	}
	if !q.atWorkingPoint() {
		t.Error("a follower's epoch is not one where a probe may run")
	}
	if p := q.announced(cp); p != (ProbePlan{}) {
		t.Errorf("a follower announces %+v, want nothing", p)
	}
}

// A terminal that leads plans the next epoch's probe at the last
// evaluation of the epoch before and announces it from then until the
// probe is judged.
func TestQueueProbeLeaderAnnouncesItsPlanAnEpochAhead(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const period, e = probePeriod, int64(1000)
	at, bites := atEpoch, func(float64) bool { return true }
	q := steadyProbe(e)
	tick := probeTick{n: 4, delivery: 3e6, eligible: true}
	for i := 0; i < ProbeEpochTicks; i++ {
		q.observe(cp, at(e, i), period, tick, bites)
		if got := q.announced(cp); i < ProbeEpochTicks-1 && got != (ProbePlan{}) {
			t.Fatalf("tick %d of the epoch before: announced %+v before the plan", i, got)
		}
	}
	want := ProbePlan{Epoch: uint32(e + 1), Segments: uint32(q.probeValue(cp, 1))}
	if got := q.announced(cp); got != want {
		t.Fatalf("at the epoch's last evaluation: announced %+v, want %+v (the first up-probe)", got, want)
	}
	for i := 0; i < ProbeEpochTicks; i++ {
		q.observe(cp, at(e+1, i), period, tick, bites)
		got := q.announced(cp)
		switch {
		case i < probeEnd && (got != want || q.current(cp) != float64(want.Segments)):
			t.Fatalf("tick %d of the probe's epoch: announced %+v at %.0f segments, want %+v in force", i, got, q.current(cp), want)
		case i >= probeEnd && i < ProbeEpochTicks-1 && got != (ProbePlan{}):
			t.Fatalf("tick %d, the probe judged: still announced %+v", i, got)
		}
	}
}

// After a rejected probe the windows step back 2.5 s into the epoch, and
// the rest of it is no baseline: the next epoch measures one and probes
// nothing, the one after probes again.
func TestQueueProbeSettlesAnEpochAfterARejection(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const period, e = probePeriod, int64(1000)
	at, bites := atEpoch, func(float64) bool { return true }
	q := steadyProbe(e)
	run := func(e int64, delivery func(i int) float64) (probed bool) {
		for i := 0; i < ProbeEpochTicks; i++ {
			q.observe(cp, at(e, i), period, probeTick{n: 4, delivery: delivery(i), eligible: true}, bites)
			probed = probed || q.probing(cp)
		}
		return probed
	}
	flat := func(int) float64 { return 3e6 }
	run(e, flat)
	// The up-probe loses half the delivery, and the medium comes back slowly.
	if !run(e+1, func(i int) float64 { return []float64{1.5e6, 2e6, 2.2e6}[min(i/probeEnd, 2)] }) {
		t.Fatal("no up-probe in the first epoch with a baseline")
	}
	if q.segs != 0 || !q.triedUp {
		t.Fatalf("the up-probe at × 0.5 not rejected: %.0f segments, tried %v", q.learned(cp), q.triedUp)
	}
	if run(e+2, flat) {
		t.Fatal("a probe in the epoch after the rejection, judged against the windows stepping back")
	}
	if !run(e+3, flat) {
		t.Fatal("no probe once the epoch after the rejection measured a baseline")
	}
}

// probePeriod is the evaluation interval of the tests that step a queue
// probe through wall-clock epochs.
const probePeriod = 500 * time.Millisecond

// atEpoch returns the time ticks evaluations (and a tenth of one) into the
// wall-clock probe epoch e at probePeriod.
func atEpoch(e int64, ticks int) time.Time {
	return time.Unix(0, 0).Add(time.Duration(e)*ProbeEpochTicks*probePeriod + time.Duration(ticks)*probePeriod + probePeriod/10)
}

// steadyProbe is a probe of four terminals at their working point at the
// end of epoch e − 1, its delivery 3 MB/s, nothing tried yet.
func steadyProbe(e int64) queueProbe {
	return queueProbe{n: 4, epoch: e - 1, steady: ProbeEpochTicks, best: 3e6, smooth: 3e6}
}

// What the probe did at an evaluation (Decision.Probe) is said once: a
// call between evaluations repeats the decision, not the note.
func TestCoopProbeNoteOncePerEvaluation(t *testing.T) {
	c := newCoopT(t, Params{})
	c.last = Decision{Active: true, Probe: "queue probe 2 → 8 segments per contender: delivery ×1.100 (±0.020), adopted"}
	c.tick = cadence{last: t0, dsts: []netip.Addr{dstA}}
	d := c.Decide(View{Now: t0.Add(100 * time.Millisecond), Flows: []FlowView{{Dst: dstA, MSS: 1448, SRTT: 10 * time.Millisecond, MinRTT: 4 * time.Millisecond}}})
	if !d.Active || d.Probe != "" {
		t.Errorf("between evaluations: active %v, probe note %q; want the decision repeated without the note", d.Active, d.Probe)
	}
}

// An up-probe whose gain stands out by 2 standard errors but not by
// ProbeSureZ steps back at its first look and is judged at the epoch's last
// evaluation against the tail as well: a medium that was only coming back
// from a trough that the baseline caught (the tail as high as the probe)
// rejects it; a medium whose tail is the baseline's adopts it, and the
// probe's samples are the next epoch's baseline.
func TestQueueProbeChecksAnUncertainGainAgainstTheTail(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const period, e = probePeriod, int64(1000)
	bites := func(float64) bool { return true }
	// Baseline 3.0 ± 0.3 MB/s; probe 3.6 ± 0.3 (× 1.2, about 2.8 SE).
	base := []float64{2.7e6, 3.0e6, 3.3e6}
	probe := []float64{3.3e6, 3.6e6, 3.9e6}
	for _, c := range []struct {
		name  string
		tail  []float64
		segs  float64
		tried bool
	}{
		{"the tail at the baseline's level", base, 8, false},
		{"the medium came back: the tail at the probe's level", probe, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := steadyProbe(e)
			observeBaseline(&q, cp, e, base)
			var notes []string
			for i := 0; i < ProbeEpochTicks; i++ {
				if n := q.observe(cp, atEpoch(e, i), period, probeTick{n: 4, delivery: armDelivery(i, probe, c.tail), eligible: true}, bites); n != "" {
					notes = append(notes, n)
				}
				switch {
				case i < probeEnd && q.current(cp) != 8:
					t.Fatalf("tick %d: %.0f segments; want the up-probe's 8", i, q.current(cp))
				case i >= probeEnd && i < ProbeEpochTicks-1 && (q.current(cp) != 2 || q.decided):
					t.Fatalf("tick %d: %.0f segments, decided %v; want the windows back at 2 awaiting the tail", i, q.current(cp), q.decided)
				}
			}
			if len(notes) != 2 || !strings.Contains(notes[0], "checked against the epoch's tail") || !strings.Contains(notes[1], "of the epoch's tail") {
				t.Fatalf("notes %q; want the first look's and the tail's", notes)
			}
			if q.learned(cp) != c.segs || q.triedUp != c.tried {
				t.Fatalf("learned %.0f, tried up %v; want %.0f, %v (%s)", q.learned(cp), q.triedUp, c.segs, c.tried, notes[1])
			}
			if want := "×1.200 (±0.163) of the epoch's tail"; c.segs == 8 && !strings.Contains(notes[1], want) {
				t.Errorf("tail verdict %q; want %q (the ± relative to the tail's mean)", notes[1], want)
			}
			if c.segs == 8 && !slices.Equal(q.tail, probe) {
				t.Errorf("the next baseline %v; want the probe's samples %v", q.tail, probe)
			}
		})
	}
}

// A gain that stands out by ProbeSureZ standard errors or more is adopted
// at its first look, as before (where the next step up is not worth a
// probe: nothing is chained).
func TestQueueProbeAdoptsASureGainAtOnce(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const period, e = probePeriod, int64(1000)
	bites := func(s float64) bool { return s <= 8 }
	q := steadyProbe(e)
	for i := ProbeEpochTicks - probeMeasure; i < ProbeEpochTicks; i++ {
		q.observe(cp, atEpoch(e-1, i), period, probeTick{n: 4, delivery: 3e6 + float64(i%2)*1e4, eligible: true}, bites)
	}
	for i := 0; i <= probeEnd; i++ {
		d := 3e6
		if i >= probeSettle {
			d = 3.6e6 + float64(i%2)*1e4
		}
		q.observe(cp, atEpoch(e, i), period, probeTick{n: 4, delivery: d, eligible: true}, bites)
	}
	if q.learned(cp) != 8 || q.checking || q.current(cp) != 8 {
		t.Fatalf("learned %.0f, checking %v, windows at %.0f; want 8 adopted at once", q.learned(cp), q.checking, q.current(cp))
	}
}

// swinging is a medium that gains nothing from queue and whose delivery
// swings by ±amp about mid with a period of swing (a random phase per
// seed), every evaluation's measure off by a normal scatter of sigma: rate
// adaptation that oscillates (the lab's testbed2012 profile at 4 ms, six
// terminals: the group's delivery swung between 1.0 and 2.8 MB/s every
// 3–4 s, docs/results.md, thirty-third session).
func swinging(mid, amp float64, swing time.Duration, sigma float64, seed int64) func(float64) float64 {
	rng := rand.New(rand.NewSource(seed))
	const period = 500 * time.Millisecond
	phase, k := rng.Float64()*2*math.Pi, 2*math.Pi*float64(period)/float64(swing)
	i := 0
	return func(float64) float64 {
		i++
		return (mid + amp*math.Sin(phase+k*float64(i))) * max(0.2, 1+sigma*rng.NormFloat64())
	}
}

// On a medium that gains nothing from queue but swings, an up-probe's gain
// over the baseline before it is the swing's as often as not; checked
// against the tail as well (judgeAgainstTail), the group spends far less of
// a minute at a queue it adopted for nothing. On the aggregating medium
// with the same scatter the climb to the knee still comes.
func TestQueueProbeUpStepsUnderASwingingMedium(t *testing.T) {
	const seeds = 40
	above, climbed := 0, 0
	for seed := int64(1); seed <= seeds; seed++ {
		above += ticksAboveThePair(t, swinging(2e6, 0.8e6, 3500*time.Millisecond, 0.1, seed), 60*time.Second)
		if learned, _, _ := runProbe(t, scattered(aggregating(12e6, 24, 256), 0.1), 3e6, false, 0, 60*time.Second); learned >= 32 {
			climbed++
		}
	}
	t.Logf("swinging medium: %d of %d evaluations above the pair; aggregating: knee reached in %d of %d", above, seeds*120, climbed, seeds)
	if above > seeds*120/20 {
		t.Errorf("swinging medium: %d of %d evaluations at a queue adopted for nothing, want <= %d", above, seeds*120, seeds*120/20)
	}
	if climbed < seeds*9/10 {
		t.Errorf("aggregating medium: the knee reached in %d of %d runs, want >= %d", climbed, seeds, seeds*9/10)
	}
}

// ticksAboveThePair drives a queue probe from two segments per contender on
// medium for dur and counts the evaluations at which its windows were above
// the pair outside a probe (a learned value above it).
func ticksAboveThePair(t *testing.T, medium func(float64) float64, dur time.Duration) (above int) {
	t.Helper()
	cp := CoopParams{}.Defaults()
	q := queueProbe{}
	bites := func(float64) bool { return true }
	for now := t0; now.Before(t0.Add(dur)); now = now.Add(probePeriod) {
		if q.learned(cp) > float64(cp.QueueSegments) && !q.probing(cp) {
			above++
		}
		q.observe(cp, now, probePeriod, probeTick{n: 6, delivery: medium(q.current(cp)), eligible: true}, bites)
	}
	return above
}

// A probe being checked whose epoch's last evaluation did not come (a
// late tick) is judged when the next epoch begins, on the tail it has.
func TestQueueProbeCheckJudgedAtTheNextEpochWithoutItsLastTick(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const period, e = probePeriod, int64(1000)
	bites := func(float64) bool { return true }
	base, probe := []float64{2.7e6, 3.0e6, 3.3e6}, []float64{3.3e6, 3.6e6, 3.9e6}
	q := steadyProbe(e)
	for i, d := range base {
		q.observe(cp, atEpoch(e-1, ProbeEpochTicks-probeMeasure+i), period, probeTick{n: 4, delivery: d, eligible: true}, bites)
	}
	for i := 0; i < ProbeEpochTicks-1; i++ { // the last evaluation is missing
		d := 3.0e6
		if i >= probeSettle && i < probeEnd {
			d = probe[i-probeSettle]
		}
		q.observe(cp, atEpoch(e, i), period, probeTick{n: 4, delivery: d, eligible: true}, bites)
	}
	if !q.checking || q.decided {
		t.Fatalf("checking %v, decided %v before the next epoch; want the check pending", q.checking, q.decided)
	}
	note := q.observe(cp, atEpoch(e+1, 0), period, probeTick{n: 4, delivery: 3e6, eligible: true}, bites)
	if !strings.Contains(note, "of the epoch's tail, adopted") || q.learned(cp) != 8 {
		t.Fatalf("note %q, learned %.0f; want the check judged on the tail it had and 8 adopted", note, q.learned(cp))
	}
}

// An up-probe from above the delayed-ACK pair (the medium has paid for
// queue) whose gain has the size of UpGain but not the standing of one
// (within 2 standard errors) is promising: its windows step back at once,
// the next epoch measures a baseline, and the epoch after probes the same
// step again, judged on both arms pooled (by Student's t, every arm a
// look) — against both baselines, and where it is to be checked, against
// both epochs' tails. From the pair the same reading is rejected; a step
// from the pair checked against the tail is measured again where the group
// has carried UpGain more than its baseline before (evidence: its
// uncontrolled start's deep queue did), the up-probe that would be made
// again anyway.
func TestQueueProbeMeasuresAPromisingUpStepAgain(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const period, e = probePeriod, int64(1000)
	bites := func(float64) bool { return true }
	base := []float64{2.7e6, 3.0e6, 3.3e6}
	probe := []float64{2.9e6, 3.3e6, 3.7e6} // × 1.1, about 1.3 standard errors
	var notes []string
	run := func(q *queueProbe, e int64, arm []float64) {
		t.Helper()
		from := q.learned(cp)
		for i := 0; i < ProbeEpochTicks; i++ {
			d := base[i%len(base)]
			if i >= probeSettle && i < probeEnd {
				d = arm[i-probeSettle]
			}
			if n := q.observe(cp, atEpoch(e, i), period, probeTick{n: 4, delivery: d, eligible: true}, bites); n != "" {
				notes = append(notes, n)
			}
			if i >= probeEnd && i < ProbeEpochTicks-1 && q.current(cp) != from {
				t.Fatalf("epoch %d, tick %d: %.0f segments; want the windows back at %.0f", e, i, q.current(cp), from)
			}
		}
	}
	start := func(segs float64) *queueProbe {
		q := steadyProbe(e)
		q.segs = segs
		observeBaseline(&q, cp, e, base)
		notes = nil
		return &q
	}

	q := start(2)
	run(q, e, probe)
	if len(notes) != 1 || !strings.HasSuffix(notes[0], "×1.100 (±0.192), rejected") || !q.triedUp {
		t.Fatalf("from the pair: notes %q, tried up %v; want the step rejected at its first look", notes, q.triedUp)
	}

	q = start(2)
	q.peak = 4.4e6 // the uncontrolled start carried 1.47 × the pair (evidence)
	run(q, e, probe)
	if len(notes) != 1 || !strings.HasSuffix(notes[0], "×1.100 (±0.192), rejected") {
		t.Fatalf("from the pair, the start's evidence: notes %q; want a first look that did not stand out rejected", notes)
	}

	// From the pair, a step checked against the tail (its first look out of
	// the baseline's scatter by 2 standard errors, × 1.3) whose gain over the
	// tail has UpGain's size but not the standing (× 1.083) is measured
	// again where the group has carried more before, rejected where not.
	checked, tail := []float64{3.6e6, 3.9e6, 4.2e6}, []float64{3.1e6, 3.6e6, 4.1e6}
	for _, tc := range []struct {
		peak    float64
		verdict string
	}{{0, "rejected"}, {4.4e6, "promising, measured again (arm 1 of at most 3)"}} {
		q = start(2)
		q.peak = tc.peak
		for i := 0; i < ProbeEpochTicks; i++ {
			if n := q.observe(cp, atEpoch(e, i), period, probeTick{n: 4, delivery: armDelivery(i, checked, tail), eligible: true}, bites); n != "" {
				notes = append(notes, n)
			}
		}
		if len(notes) != 2 || !strings.HasSuffix(notes[0], "a gain to be checked against the epoch's tail") ||
			!strings.HasSuffix(notes[1], "of the epoch's tail, "+tc.verdict) || q.learned(cp) != 2 {
			t.Fatalf("from the pair, peak %.1f MB/s: notes %q, learned %.0f; want the check %s", tc.peak/1e6, notes, q.learned(cp), tc.verdict)
		}
	}

	q = start(8)
	run(q, e, probe)
	if len(notes) != 1 || !strings.Contains(notes[0], "8 → 32") || !strings.HasSuffix(notes[0], "promising, measured again (arm 1 of at most 3)") || q.learned(cp) != 8 || q.triedUp {
		t.Fatalf("notes %q, learned %.0f, tried up %v; want the first arm promising, 8 kept", notes, q.learned(cp), q.triedUp)
	}
	run(q, e+1, base) // the windows came back: no baseline, no probe
	if q.dir != 0 || len(notes) != 1 {
		t.Fatalf("epoch after the arm: dir %d, notes %q; want no probe", q.dir, notes)
	}
	run(q, e+2, []float64{3.5e6, 3.6e6, 3.7e6})
	// Both arms against both baselines, then against both epochs' tails
	// (this arm alone: × 1.200 of its tail).
	if len(notes) != 3 || !strings.HasSuffix(notes[1], "×1.150 (±0.124), a gain to be checked against the epoch's tail (arm 2 of at most 3)") ||
		!strings.HasSuffix(notes[2], "×1.150 (±0.124) of the epoch's tail, adopted (arm 2 of at most 3)") || q.learned(cp) != 32 {
		t.Fatalf("notes %q, learned %.0f; want the second arm pooled with the first (× 1.15), checked against both tails, and 32 adopted", notes, q.learned(cp))
	}
}

// ladder is a medium that aggregates in steps: 8 segments per contender
// carry 1.5 × what 2 do, 32 another 1.25 ×, 128 gain128 × more and nothing
// beyond; every evaluation's measure is off by a normal scatter that grows
// with the queue (±4 %, ±6 % at 32, ±12 % at 128: in the lab, 802.11ac at
// 1 Gbit/s wired, four terminals, the group's delivery at 128 segments per
// contender scattered by ±10–15 % per evaluation and 32 → 128 read
// × 0.90–1.30 at ± 0.05–0.31, docs/results.md, thirty-fifth session).
func ladder(gain128 float64, seed int64) func(float64) float64 {
	return stairs(seed, stair{0, 7.2e6, 0.04}, stair{8, 7.2e6 * 1.5, 0.04}, stair{32, 7.2e6 * 1.5 * 1.25, 0.06}, stair{128, 7.2e6 * 1.5 * 1.25 * gain128, 0.12})
}

// On a medium whose last step up gains 15 % within a scatter of ±12 % per
// evaluation, the promising arms pooled reach it in most minutes (28 of 40
// seeds; judged on one arm, 13), and where it gains nothing they never
// adopt it.
func TestQueueProbeClimbsANoisyKnee(t *testing.T) {
	const seeds = 40
	reached, falsely := 0, 0
	for seed := int64(1); seed <= seeds; seed++ {
		if learned, _, _ := runProbe(t, ladder(1.15, seed), 11e6, true, 0, 60*time.Second); learned >= 128 {
			reached++
		}
		if learned, _, _ := runProbe(t, ladder(1, seed), 11e6, true, 0, 60*time.Second); learned >= 128 {
			falsely++
		}
	}
	t.Logf("a 15 %% step: reached in %d of %d minutes; no step: adopted in %d", reached, seeds, falsely)
	if reached < seeds/2 {
		t.Errorf("a 15 %% step within ±12 %% scatter reached in %d of %d minutes, want >= %d", reached, seeds, seeds/2)
	}
	if falsely > seeds/20 {
		t.Errorf("a step that gains nothing adopted in %d of %d minutes, want <= %d", falsely, seeds, seeds/20)
	}
}

// A probe being checked against the tail whose epoch is voided (a tick
// that is not the group's working point: someone else's queue) takes its
// arm with it: no later probe of the same step is pooled with it.
func TestQueueProbeVoidedCheckLeavesNoPool(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const period, e = probePeriod, int64(1000)
	bites := func(float64) bool { return true }
	q := steadyProbe(e)
	q.segs = 8
	observeBaseline(&q, cp, e, []float64{2.7e6, 3.0e6, 3.3e6})
	probe := []float64{3.3e6, 3.6e6, 3.9e6} // × 1.2, about 2.8 standard errors: checked
	for i := 0; i <= probeEnd; i++ {
		q.observe(cp, atEpoch(e, i), period, probeTick{n: 4, delivery: armDelivery(i, probe, nil), eligible: true}, bites)
	}
	if !q.checking || q.pool.arms != 1 {
		t.Fatalf("checking %v, pool arms %d; want the arm checked, its samples kept for the tail", q.checking, q.pool.arms)
	}
	for i := probeEnd + 1; i < ProbeEpochTicks-probeMeasure; i++ {
		q.observe(cp, atEpoch(e, i), period, probeTick{n: 4, delivery: 3e6, eligible: true}, bites)
	}
	q.observe(cp, atEpoch(e, ProbeEpochTicks-probeMeasure), period, probeTick{n: 4, delivery: 3e6, eligible: false}, bites) // the tail's first: voids (TestQueueProbeCheckSurvivesItsOwnDrain)
	if q.checking || q.pool.arms != 0 {
		t.Fatalf("after a void tick: checking %v, pool arms %d; want neither", q.checking, q.pool.arms)
	}
}

// A checked up-step from above the pair whose gain over the tail has the
// size of UpGain but not the standing is promising too: measured again
// (its tail pooled with the next arm's), where from the pair it is
// rejected.
func TestQueueProbeTailCheckPromising(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const period, e = probePeriod, int64(1000)
	bites := func(float64) bool { return true }
	base := []float64{2.7e6, 3.0e6, 3.3e6}
	probe := []float64{3.3e6, 3.6e6, 3.9e6} // × 1.2 of the baseline, about 2.8 standard errors: checked
	tail := []float64{3.0e6, 3.3e6, 3.6e6}  // × 1.09 of the tail, within its scatter
	for _, c := range []struct {
		segs    float64
		verdict string
		arms    int
	}{{2, "of the epoch's tail, rejected", 0}, {8, "of the epoch's tail, promising, measured again (arm 1 of at most 3)", 1}} {
		q := steadyProbe(e)
		q.segs = c.segs
		observeBaseline(&q, cp, e, base)
		var last string
		for i := 0; i < ProbeEpochTicks; i++ {
			if n := q.observe(cp, atEpoch(e, i), period, probeTick{n: 4, delivery: armDelivery(i, probe, tail), eligible: true}, bites); n != "" {
				last = n
			}
		}
		if !strings.HasSuffix(last, c.verdict) || q.learned(cp) != c.segs || q.pool.arms != c.arms {
			t.Fatalf("from %.0f: verdict %q, learned %.0f, pool arms %d; want %q, %.0f kept, %d", c.segs, last, q.learned(cp), q.pool.arms, c.verdict, c.segs, c.arms)
		}
		q.observe(cp, atEpoch(e+1, 0), period, probeTick{n: 4, delivery: 3e6, eligible: true}, bites)
		if c.arms > 0 && (len(q.pool.tail) != len(tail) || q.next != 1 || q.dir != 0) {
			t.Errorf("from %.0f, the next epoch: pool tail %v, next %d, dir %d; want the arm's tail pooled once, up next, no probe (a baseline first)", c.segs, q.pool.tail, q.next, q.dir)
		}
	}
}

// observeBaseline feeds a steady probe the deliveries base as the last
// evaluations of epoch e − 1: the baseline of epoch e's probe.
func observeBaseline(q *queueProbe, cp CoopParams, e int64, base []float64) {
	for i, d := range base {
		q.observe(cp, atEpoch(e-1, ProbeEpochTicks-len(base)+i), probePeriod, probeTick{n: 4, delivery: d, eligible: true}, func(float64) bool { return true })
	}
}

// armDelivery is the group's delivery at evaluation i of a probing epoch:
// the probe's samples while it is measured, the tail's over the epoch's
// last evaluations (where tail is given), 3 MB/s otherwise.
func armDelivery(i int, probe, tail []float64) float64 {
	switch {
	case i >= probeSettle && i < probeEnd:
		return probe[i-probeSettle]
	case tail != nil && i >= ProbeEpochTicks-len(tail):
		return tail[i-(ProbeEpochTicks-len(tail))]
	}
	return 3e6
}

// An up-probe adopted at its first look (sure) chains the next step up into
// the epoch's second half, announced for it (From probeEnd) and judged at
// the epoch's last evaluation against the arm just adopted: a sure gain is
// adopted and its arm is the next epoch's baseline; an arm whose scatter
// rules the gain out is rejected as any up-probe is; any other goes on as
// the next epoch's probe against the same baseline, counted as no failure
// (TestQueueProbeSecondHalfGoesOnAsTheNextEpochsProbe).
func TestQueueProbeChainsTheNextStepOnASureGain(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const period, e = probePeriod, int64(1000)
	bites := func(float64) bool { return true }
	base := []float64{3.0e6, 3.01e6, 3.0e6}
	first := []float64{3.6e6, 3.61e6, 3.6e6} // × 1.2, sure
	for _, c := range []struct {
		name    string
		chained []float64
		learned float64
		tried   bool
		next    int
		plan    bool // the next epoch's probe planned (a baseline)
	}{
		{"a sure gain", []float64{4.3e6, 4.31e6, 4.3e6}, 32, false, 1, true},
		{"a gain not yet sure: the next epoch's probe", []float64{3.8e6, 4.0e6, 4.2e6}, 8, false, 1, true},
		{"a gain's size, not its standing: the next epoch's probe", []float64{3.2e6, 4.0e6, 4.8e6}, 8, false, 1, true},
		{"no gain read, its scatter wide: the next epoch's probe", []float64{3.0e6, 3.5e6, 4.0e6}, 8, false, 1, true},
		{"no gain", []float64{3.6e6, 3.59e6, 3.6e6}, 8, true, -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := steadyProbe(e)
			observeBaseline(&q, cp, e, base)
			var notes []string
			for i := 0; i < ProbeEpochTicks; i++ {
				d := 3e6
				switch {
				case i >= probeSettle && i < probeEnd:
					d = first[i-probeSettle]
				case i >= probeEnd && i < probeEnd+probeSettle:
					d = 3.6e6
				case i >= probeEnd+probeSettle:
					d = c.chained[i-probeEnd-probeSettle]
				}
				if n := q.observe(cp, atEpoch(e, i), period, probeTick{n: 4, delivery: d, eligible: true, halves: true}, bites); n != "" {
					notes = append(notes, n)
				}
				want, plan := 8.0, ProbePlan{Epoch: uint32(e), Segments: 8}
				if i >= probeEnd {
					want, plan = 32, ProbePlan{Epoch: uint32(e), Segments: 32, From: probeEnd}
				}
				if i < ProbeEpochTicks-1 && (q.current(cp) != want || q.announced(cp) != plan) {
					t.Fatalf("tick %d: windows at %.0f, announced %+v; want %.0f, %+v", i, q.current(cp), q.announced(cp), want, plan)
				}
				if got := q.secondHalf(e); got != (i >= probeEnd) {
					t.Fatalf("tick %d: secondHalf %v", i, got)
				}
			}
			if len(notes) != 2 || !strings.Contains(notes[0], "adopted; queue probe 8 → 32 segments per contender chained") || !strings.Contains(notes[1], "(second half)") {
				t.Fatalf("notes %q; want the first step adopted and chained, then the chained verdict", notes)
			}
			if q.learned(cp) != c.learned || q.triedUp != c.tried || q.next != c.next {
				t.Errorf("learned %.0f, tried up %v, next %d; want %.0f, %v, %d (%s)", q.learned(cp), q.triedUp, q.next, c.learned, c.tried, c.next, notes[1])
			}
			if got := q.plan.epoch == e+1 && q.plan.dir > 0; got != c.plan {
				t.Errorf("next epoch's plan %+v; want planned %v", q.plan, c.plan)
			}
			next := first // the same step next, against the same baseline
			if c.learned == 32 {
				next = c.chained // the adopted value's arm
			}
			if c.plan && !slices.Equal(q.tail, next) {
				t.Errorf("the next baseline %v; want %v", q.tail, next)
			}
		})
	}
}

// A follower takes a chained plan (From probeEnd) only in its epoch's
// second half, and counts the whole epoch as one whose probe runs.
func TestQueueProbeFollowsAChainedPlan(t *testing.T) {
	cp := CoopParams{}.Defaults()
	l := PeerView{QueueSegments: 8, Plan: ProbePlan{Epoch: 1000, Segments: 32, From: probeEnd}}
	for _, c := range []struct {
		tick int
		want float64
	}{{probeEnd - 1, 8}, {probeEnd, 32}, {ProbeEpochTicks - 1, 32}} {
		var q queueProbe
		q.follow(cp, atEpoch(1000, c.tick), probePeriod, l)
		if got := q.current(cp); got != c.want || !q.secondHalf(1000) || q.secondHalf(1001) {
			t.Errorf("tick %d: windows at %.0f, chain runs %v (next epoch %v); want %.0f, true (false)", c.tick, got, q.secondHalf(1000), q.secondHalf(1001), c.want)
		}
	}
}

// On an aggregating medium whose steps pay surely, a group that may probe
// in an epoch's halves (its leader, or a terminal alone) chains the next
// step on a sure verdict: from its first evaluation at an epoch's start it
// learns 8 segments per contender 7.5 s later (the first probe in the
// next epoch's first half), 32 at 9.5 s (chained into its second half)
// and 128 at 12.5 s (the next epoch's first half). A group whose
// terminals judge for themselves keeps whole epochs: 8 at 7.5 s, 32 at
// 12.5 s, 128 at 17.5 s.
func TestQueueProbeClimbsByHalfEpochs(t *testing.T) {
	cp := CoopParams{}.Defaults()
	medium := aggregating(54e6, 8, 256) // 128 still pays: 2 → 8 → 32 → 128 all sure
	climb := func(halves bool) (at8, at32, at128 time.Duration) {
		q := queueProbe{}
		bites := func(float64) bool { return true }
		for now := t0; now.Before(t0.Add(30 * time.Second)); now = now.Add(probePeriod) {
			q.observe(cp, now, probePeriod, probeTick{n: 4, delivery: medium(q.current(cp)), eligible: true, halves: halves}, bites)
			l, since := q.learned(cp), now.Sub(t0)
			if l >= 8 && at8 == 0 {
				at8 = since
			}
			if l >= 32 && at32 == 0 {
				at32 = since
			}
			if l >= 128 && at128 == 0 {
				at128 = since
			}
		}
		return at8, at32, at128
	}
	for _, c := range []struct {
		halves           bool
		at8, at32, at128 time.Duration
	}{{true, 7500 * time.Millisecond, 9500 * time.Millisecond, 12500 * time.Millisecond}, {false, 7500 * time.Millisecond, 12500 * time.Millisecond, 17500 * time.Millisecond}} {
		if at8, at32, at128 := climb(c.halves); at8 != c.at8 || at32 != c.at32 || at128 != c.at128 {
			t.Errorf("halves %v: 8 segments learned at %v, 32 at %v, 128 at %v; want %v, %v, %v", c.halves, at8, at32, at128, c.at8, c.at32, c.at128)
		}
	}
}

// A chained probe's phase runs to its epoch's end, and the elasticity test
// pauses for all of it: a follower whose leader announced the chained step
// (From probeEnd) pauses the test in the epoch's last evaluations too, the
// group's windows risen — and does not, after probeAgree, under a plan that
// names no chain.
func TestCoopPausesTheElasticityTestForAChainedProbe(t *testing.T) {
	base := 4 * time.Millisecond
	const e = 7 // the probe's epoch: t0 is an epoch boundary, epochs are 5 s
	epoch := time.Duration(ProbeEpochTicks) * probePeriod
	run := func(from uint32) (pausedLate int) {
		c := newCoopT(t, Params{})
		now := t0
		step := func(q time.Duration, peerCwnd uint32, plan ProbePlan) string {
			v := View{Now: now, ID: 2, Flows: []FlowView{{Dst: dstA, MSS: 1448, Cwnd: 30, SRTT: base + q, MinRTT: base, DeliveryRate: 0.75e6}}}
			for id := uint64(1); id <= 4; id++ {
				if id == 2 {
					continue
				}
				p := PeerView{ID: id, QueueSegments: 8, ActiveFlows: 1, SRTT: base + q, MinRTT: base, DeliveryRate: 0.75e6, Cwnd: peerCwnd, Hi: peerCwnd}
				if id == 1 {
					p.Plan = plan
				}
				v.Peers = append(v.Peers, p)
			}
			now = now.Add(probePeriod)
			return c.Decide(v).Reason
		}
		step(20*time.Millisecond, 30, ProbePlan{}) // the first estimate
		for now.Before(t0.Add(e*epoch + probeEnd*probePeriod)) {
			step(4*time.Millisecond, 30, ProbePlan{})
		}
		chained := ProbePlan{Epoch: e + uint32(t0.UnixNano()/int64(epoch)), Segments: 32, From: from}
		for now.Before(t0.Add((e + 1) * epoch)) {
			late := now.Sub(t0.Add(e*epoch)) >= probeAgree*probePeriod
			if why := step(150*time.Millisecond, 90, chained); late && strings.Contains(why, "elasticity test paused: the windows under bounds rose") {
				pausedLate++
			}
		}
		return pausedLate
	}
	if n := run(probeEnd); n != ProbeEpochTicks-probeAgree {
		t.Errorf("the chained probe's last %d evaluations: paused at %d", ProbeEpochTicks-probeAgree, n)
	}
	if n := run(0); n != 0 {
		t.Errorf("no chain announced: paused at %d of the epoch's last evaluations, want 0 (the test shows nothing)", n)
	}
}

// A second-half probe that is not sure goes on as the next epoch's probe:
// the windows at the step again from that epoch's start, judged at its
// half by the whole-epoch rules against the second-half probe's baseline.
// An evaluation a probe settles in that is not the group's working point
// (its queue the probe's own, above or below the span of the target it was
// sized for) voids neither.
func TestQueueProbeSecondHalfGoesOnAsTheNextEpochsProbe(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const e = int64(1000)
	bites := func(float64) bool { return true }
	first := []float64{3.6e6, 3.61e6, 3.6e6}
	chained := []float64{3.8e6, 4.0e6, 4.2e6} // × 1.11 of first, about 3.4 SE: not sure
	q := steadyProbe(e)
	observeBaseline(&q, cp, e, []float64{3.0e6, 3.01e6, 3.0e6})
	var notes []string
	obs := func(ep int64, i int, d float64, eligible bool) {
		if n := q.observe(cp, atEpoch(ep, i), probePeriod, probeTick{n: 4, delivery: d, eligible: eligible, halves: true}, bites); n != "" {
			notes = append(notes, n)
		}
	}
	for i := 0; i < ProbeEpochTicks; i++ {
		d := 3.6e6
		switch {
		case i >= probeSettle && i < probeEnd:
			d = first[i-probeSettle]
		case i >= probeEnd+probeSettle:
			d = chained[i-probeEnd-probeSettle]
		}
		obs(e, i, d, i != probeEnd+1) // the chained step settling: its queue not yet the target's
	}
	if q.learned(cp) != 8 || q.triedUp || q.plan.epoch != e+1 || q.plan.dir != 1 || !slices.Equal(q.tail, first) {
		t.Fatalf("after the second half: learned %.0f, tried up %v, plan %+v, next baseline %v; want 8, no, 8 → 32 next, the first arm (%q)", q.learned(cp), q.triedUp, q.plan, q.tail, notes)
	}
	for i := 0; i <= probeEnd; i++ {
		obs(e+1, i, 4.3e6+float64(i%2)*1e4, i != 0) // its first evaluation sized for the learned value, the queue the probe's
		if i < probeEnd && q.current(cp) != 32 {
			t.Fatalf("next epoch, tick %d: windows at %.0f; want the step's 32", i, q.current(cp))
		}
	}
	if last := notes[len(notes)-1]; q.learned(cp) != 32 || !strings.Contains(last, "queue probe 8 → 32 segments per contender: delivery ×1.194") {
		t.Errorf("learned %.0f, last note %q; want 32 adopted against the first arm", q.learned(cp), last)
	}
}

// An up-probe being checked against the epoch's tail is not voided by the
// evaluations between its step back and the tail, where its own queue
// drains (not the group's working point by the span of the learned
// target): the tail still judges it. An evaluation of the tail that is not
// the working point still voids it.
func TestQueueProbeCheckSurvivesItsOwnDrain(t *testing.T) {
	cp := CoopParams{}.Defaults()
	const e = int64(1000)
	bites := func(float64) bool { return true }
	base := []float64{2.7e6, 3.0e6, 3.3e6}
	probe := []float64{3.3e6, 3.6e6, 3.9e6} // × 1.2, about 2.8 SE: checked against the tail
	for _, c := range []struct {
		name       string
		ineligible int // the evaluation that is not the working point
		learned    float64
		judged     bool
	}{
		{"the drain's first evaluation", probeEnd + 1, 8, true},
		{"the probe's first evaluation", 0, 8, true},
		{"the probe's first measured evaluation", probeSettle, 2, false},
		{"the tail's first evaluation", ProbeEpochTicks - probeMeasure, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := steadyProbe(e)
			observeBaseline(&q, cp, e, base)
			judged := false
			for i := 0; i < ProbeEpochTicks; i++ {
				n := q.observe(cp, atEpoch(e, i), probePeriod, probeTick{n: 4, delivery: armDelivery(i, probe, base), eligible: i != c.ineligible}, bites)
				judged = judged || strings.Contains(n, "of the epoch's tail")
			}
			if q.learned(cp) != c.learned || judged != c.judged {
				t.Errorf("learned %.0f, judged against the tail %v; want %.0f, %v", q.learned(cp), judged, c.learned, c.judged)
			}
		})
	}
}

// A probe whose windows step back to the learned value without adopting it
// (rejected, or stepped back to be checked against the epoch's tail)
// leaves the capacity estimate where it found it: the estimate's rise
// during the probe followed the probe's queue, and at the learned value it
// would size the windows above the baseline's (unprobe). An adopted probe
// keeps it, and the step chained on it starts from there.
func TestCoopProbeNotAdoptedLeavesTheEstimateWhereItFoundIt(t *testing.T) {
	const before, during = 6e6, 10e6
	for _, c := range []struct {
		name        string
		end         func(q *queueProbe) // the probe's verdict
		adopted     bool
		want        float64
		stillActive bool
	}{
		{"rejected", func(q *queueProbe) { q.decided = true }, false, before, false},
		{"stepped back to be checked", func(q *queueProbe) { q.checking = true }, false, before, false},
		{"adopted", func(q *queueProbe) { q.decided, q.segs = true, 8 }, true, during, false},
		{"adopted, the next step chained", func(q *queueProbe) { q.segs, q.second = 8, true }, true, during, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			co := newCoopT(t, Params{})
			co.capacity, co.probe = before, queueProbe{n: 4, dir: 1} // an up-probe 2 → 8 comes into force
			co.unprobe(false)
			co.capacity = during // the estimate followed the probe's delivery
			co.unprobe(false)
			c.end(&co.probe)
			co.unprobe(c.adopted)
			if co.capacity != c.want || co.probe.probing(co.p.Coop) != c.stillActive {
				t.Fatalf("estimate %.0f, a probe in force %v; want %.0f, %v", co.capacity, co.probe.probing(co.p.Coop), c.want, c.stillActive)
			}
			if !c.stillActive {
				return
			}
			co.capacity = 12e6 // the chained step's arm
			co.probe.decided = true
			co.unprobe(false)
			if co.capacity != during {
				t.Errorf("the chained step rejected: estimate %.0f, want its start's %.0f", co.capacity, during)
			}
		})
	}
	// The capacity measured again (its first estimate) while a probe is in
	// force: the probe's start is the new estimate's, not the old one's.
	co := newCoopT(t, Params{})
	co.capacity, co.probe = before, queueProbe{n: 4, dir: 1}
	co.unprobe(false)
	co.capacity = 0
	co.estimate(t0, group{measured: 9e6, rbar: 0.004}, 0.002, 1448, true)
	co.unprobe(false)
	co.probe.decided = true
	co.unprobe(false)
	if co.capacity != 9e6 {
		t.Errorf("a probe rejected after the capacity was measured again: estimate %.0f, want the new first estimate's 9e6", co.capacity)
	}
}

package policy

import (
	"fmt"
	"time"

	"github.com/coopcc/coopcc/airtime"
)

// air is what the group knows of the air it shares over the last interval
// (package airtime): the share of the channel's time that was busy, as this
// terminal's radio saw it, and the share of the busy air that was the
// group's own — every terminal's transmissions and the frames sent to it,
// this terminal's and every peer's as their statuses report them (View.Air,
// PeerView.Air). What is busy and nobody's in the group is someone else's:
// hosts without coopcc, or another network on the channel — told apart
// where this terminal's radio reports the time it received its own
// network's frames (airtime.Shares.Foreign): another network's air fills no
// queue of this one, and counts as nobody's.
type air struct {
	known   bool    // this terminal's and every active peer's airtime are known
	busy    float64 // the channel's busy share, this terminal's view
	own     float64 // the group's share of the busy air: Σ own/busy over its terminals
	foreign float64 // another network's share of the busy air, this terminal's view (0: none, or not told)
}

// airOf is the group's air from this terminal's shares and its peers'. Each
// terminal's own airtime counts as a share of the busy air it saw over its
// own interval: a peer's report is up to a status interval older than this
// terminal's reading, and while the medium fills (a start-up) its own
// airtime against this terminal's busy time undercounted it — four coop
// terminals at 256 ms (lab, scalability --quick, twenty-fourth session)
// accounted for 34–51 % of the busy air for a tick 3 s into their flows,
// and for 80–89 % after. It is unknown when this terminal's radio reports
// no busy time or a peer reports none: a peer's air counted as nobody's
// would read as someone else's. A peer without active flows still counts
// (its downloads are the group's air too, and its status may lag its
// uploads' start by an interval: ten coop terminals at 4 ms, lab, twenty-
// fourth session, heard 1 and 6 active terminals in their first second,
// the others' air unaccounted for); on a shared channel its radio sees it
// busy, so it knows the air as soon as it has read its counters twice.
func airOf(self airtime.Shares, peers []PeerView) air {
	of := func(s airtime.Shares) float64 {
		if s.Busy <= 0 {
			return 0
		}
		// No terminal holds more than all the busy air it saw (a
		// collision's time counts for each station in it, and one peer
		// that reports a busy time near 0 must not weigh as a thousand).
		return min(s.Own/s.Busy, 1)
	}
	a := air{known: self.Busy > 0, busy: self.Busy, own: of(self)}
	if self.Busy > 0 {
		a.foreign = min(self.Foreign/self.Busy, 1)
	}
	for _, p := range peers {
		if p.Air.Busy <= 0 {
			a.known = false
		}
		a.own += of(p.Air)
	}
	return a
}

// others is the share of the busy air of this network that the group does
// not account for: hosts without coopcc.
func (a air) others() float64 { return max(1-a.own-a.foreign, 0) }

// crowded reports whether hosts outside the group hold the medium: it is
// busy (AirBusy of the channel's time or more) and AirOthers of that or more
// is nobody's in the group.
func (a air) crowded() bool {
	return a.known && a.busy >= AirBusy && a.others() >= AirOthers
}

// owned reports whether the busy medium is the group's: busy (AirBusy of
// the channel's time or more) with no more than AirOwned of the busy air
// left to anyone else. Then the elasticity test's verdict is not taken
// (compete.inelastic): a queue that did not follow the group's cut grew with
// the medium's service time, not with someone else's windows. Under rate
// adaptation (testbed2012's ARF) ten coop terminals at 4 ms (lab,
// papers/000's scalability, twenty-fourth session) gave themselves seven
// such verdicts in a 60 s run, holding 93–113 % of a medium busy 86–94 % of
// the time at each; on 802.11ac the medium's access floor did the same
// (docs/policies.md, Limits). A wired bottleneck that other traffic shares
// leaves the medium idle (under AirBusy), and the test decides there as
// before.
func (a air) owned() bool {
	return a.known && a.busy >= AirBusy && a.others() <= AirOwned
}

// AirOwned is the share of the busy air that may be left to others for the
// medium to count as the group's own (air.owned): a tenth, where an
// all-coop group accounts for 100–113 % of it in steady state (collisions
// count for every station in them) and its least in a 60 s run under ARF
// was 79 % in one evaluation of 61.
const AirOwned = 0.1

// note is the air for a decision's reason ("" when unknown).
func (a air) note() string {
	if !a.known {
		return ""
	}
	if a.foreign > 0 {
		return fmt.Sprintf("; air busy %.0f %%, the group's %.0f %% of it, another network's %.0f %%", 100*a.busy, 100*a.own, 100*a.foreign)
	}
	return fmt.Sprintf("; air busy %.0f %%, the group's %.0f %% of it", 100*a.busy, 100*a.own)
}

// AirBusy is the channel's busy share from which the air's evidence counts:
// under it the medium is not the bottleneck (a group behind a slower wired
// link, or app-limited), and a queue that does not drain is somewhere else.
// A lone saturated 802.11g station keeps the medium 65–80 % busy (the rest
// is DIFS and backoff: emu's TestMediumSamples).
const AirBusy = 0.5

// AirOthers is the share of the busy air held outside the group from which
// the group's queue is taken for someone else's while it is above the
// target (compete.airVerdict). An all-coop group accounts for all of it and
// more (a collision counts for every station in it): four coop terminals at
// 256 ms (lab, scalability --quick, twenty-fourth session) for 100–111 % of
// the busy air in steady state; two coop terminals beside two CUBIC hosts
// for 30–50 % of it (coexistence --quick, N = 4).
const AirOthers = 0.25

// seeAir records the group's air at now (before observe): crowdedSince is
// when the present run of crowded evaluations began (zero when the last was
// not crowded), and airOwned whether the open episode has seen the busy air
// the group's (hold).
func (s *compete) seeAir(now time.Time, a air) {
	s.air = a
	s.airOwned = s.airOwned || !s.since.IsZero() && a.owned()
	switch {
	case !a.crowded():
		s.crowdedSince = time.Time{}
	case s.crowdedSince.IsZero():
		s.crowdedSince = now
	}
}

// airJudge gives the air's verdict on the group's queue d (observe's
// arguments) ahead of the elasticity test, and apart from it: none unless
// an estimate is in force and the queue is above the target d*, and then
// when airVerdict finds it someone else's. By the air no episode needs to
// run its course, and none may put the verdict off: an episode restarts at
// every rise of a first estimate still ramping, and the test pauses while
// the group's windows rise in a queue probe — beside eight CUBIC hosts (lab,
// coexistence --quick, N = 10, twenty-fourth session) the hosts held 81–91
// % of the busy air from 2.6 s into the flows, and the verdict waited for
// the probe's pause until 5.6 s.
func (s *compete) airJudge(now time.Time, cp CoopParams, n int, d, dStar, rbar, capacity, floorWin, measured float64) string {
	s.remember(now, n, max(cp.OffAfter, seconds(2*(rbar+d))))
	if capacity <= 0 || d <= dStar || !s.airVerdict(now, cp, n) {
		return ""
	}
	return s.inelastic(now, cp, n, d, dStar, rbar, capacity, floorWin, measured, false, s.cutDone(capacity), byAir)
}

// airVerdict reports whether the group's queue, above its target, is
// someone else's by the air: the medium has been crowded (air.crowded) for
// OffAfter (three evaluations at the default interval), and the group has
// kept its size over that time with nobody heard in it missing now (a peer
// whose status is late would count as someone else's air). No cut needs to
// be waited for, nor can it be read: behind an AP queue that hosts keep
// full, the group's cut lets the AP serve that queue faster (fewer stations
// contend), and the group's RTT falls by a fifth while the hosts' windows
// grow — it "followed" (docs/results.md, twenty-third session). Nor is a
// queue within OffRatio of the target the group's by the air's account
// (inelastic): beside two CUBIC hosts (lab, coexistence --quick, N = 4,
// twenty-fourth session) the group's queue stayed at 27–59 ms against a
// 38 ms target for 3.5 s while the hosts held two thirds of the busy air
// and grew; the verdict waited for 77 ms.
func (s *compete) airVerdict(now time.Time, cp CoopParams, n int) bool {
	// The evaluations' clock ticks with a millisecond of jitter: three
	// evaluations half a second apart may span 999 ms.
	since := func(t time.Time) time.Duration { return now.Sub(t).Round(10 * time.Millisecond) }
	return !s.crowdedSince.IsZero() && since(s.crowdedSince) >= cp.OffAfter &&
		n == s.nMax && since(s.nMaxSince) >= cp.OffAfter
}

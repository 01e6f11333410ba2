package policy

import (
	"fmt"
	"time"

	"github.com/coopcc/coopcc/airtime"
)

// air is what the group knows of the air it shares over the last interval
// (package airtime): the share of the channel's time that was busy, as this
// terminal's radio saw it, and the shares that were the group's own — every
// terminal's transmissions and the frames sent to it, this terminal's and
// every peer's as their statuses report them (View.Air, PeerView.Air).
// What is busy and nobody's in the group is someone else's: hosts without
// coopcc, or another network on the channel.
type air struct {
	known bool    // this terminal's and every active peer's airtime are known
	busy  float64 // the channel's busy share
	own   float64 // Σ the group's own shares
}

// airOf is the group's air from this terminal's shares and its peers'. It
// is unknown when this terminal's radio reports no busy time or an active
// peer reports no airtime: a peer's air counted as nobody's would read as
// someone else's. Peers without active flows count with what they report
// (their downloads are the group's air too).
func airOf(self airtime.Shares, peers []PeerView) air {
	a := air{known: self.Busy > 0, busy: self.Busy, own: self.Own}
	for _, p := range peers {
		known := p.Air.Busy > 0 || p.Air.Own > 0
		if !known && p.ActiveFlows > 0 {
			a.known = false
		}
		a.own += p.Air.Own
	}
	return a
}

// others is the share of the busy air the group does not account for.
func (a air) others() float64 { return max(a.busy-a.own, 0) }

// crowded reports whether hosts outside the group hold the medium: it is
// busy (AirBusy of the channel's time or more) and AirOthers of that or more
// is nobody's in the group.
func (a air) crowded() bool {
	return a.known && a.busy >= AirBusy && a.others() >= AirOthers*a.busy
}

// note is the air for a decision's reason ("" when unknown).
func (a air) note() string {
	if !a.known {
		return ""
	}
	return fmt.Sprintf("; air busy %.0f %%, the group's %.0f %%", 100*a.busy, 100*a.own)
}

// AirBusy is the channel's busy share from which the air's evidence counts:
// under it the medium is not the bottleneck (a group behind a slower wired
// link, or app-limited), and a queue that does not drain is somewhere else.
// A lone saturated 802.11g station keeps the medium 65–80 % busy (the rest
// is DIFS and backoff: emu's TestMediumSamples).
const AirBusy = 0.5

// AirOthers is the share of the busy air held outside the group from which
// the group's queue is taken for someone else's while it is above OffRatio
// × the target (compete.airVerdict). An all-coop group accounts for all of
// it but the collisions' overlap and the AP's broadcasts (a few per cent in
// the lab's emulator); two hosts beside two coop terminals held 55–75 % of
// it from 3 s into the flows on (docs/results.md, twenty-third session).
const AirOthers = 0.25

// seeAir records the group's air at now (before observe): crowdedSince is
// when the present run of crowded evaluations began (zero when the last was
// not crowded).
func (s *compete) seeAir(now time.Time, a air) {
	s.air = a
	switch {
	case !a.crowded():
		s.crowdedSince = time.Time{}
	case s.crowdedSince.IsZero():
		s.crowdedSince = now
	}
}

// airVerdict reports whether the open episode's queue d is someone else's by
// the air: the medium has been crowded (air.crowded) for OffAfter (three
// evaluations at the default interval), the group has kept its size over that time and nobody
// heard in it is missing now (a peer whose status is late would count as
// someone else's air), and the queue is above OffRatio × the target d*. No
// cut needs to be waited for, nor can it be read: behind an AP queue that
// hosts keep full, the group's cut lets the AP serve that queue faster (fewer
// stations contend), and the group's RTT falls by a fifth while the hosts'
// windows grow — it "followed" (docs/results.md, twenty-third session).
func (s *compete) airVerdict(now time.Time, cp CoopParams, n int, d, dStar float64) bool {
	return !s.crowdedSince.IsZero() && now.Sub(s.crowdedSince) >= cp.OffAfter &&
		n == s.nMax && now.Sub(s.formed) >= cp.OffAfter && d > cp.OffRatio*dStar
}

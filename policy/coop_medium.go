package policy

import (
	"fmt"
	"sort"
)

// medium is what the group knows of the rate its medium runs at: the PHY
// rates its WLAN interfaces transmit at, as their drivers report them
// (View.LinkRate, PeerView.LinkRate; 0 = unknown). Rate adaptation (ARF,
// Minstrel) lowers them when the stations' attempts fail — also when they
// fail by colliding, so a group whose windows keep more stations backlogged
// at once slows its own medium down (docs/collapse.md §6). coop's
// elasticity test must not take the queue that such a medium builds under
// the group's own windows for someone else's (coop_compete.go).
type medium struct {
	self   float64 // this terminal's rate, Mbit/s (0 = unknown)
	median float64 // the median over the terminals that report one (0 = none)
}

// mediumOf is the group's medium: this terminal (terms[0]) and the median
// of every known rate. The median, not the mean: one peer that reports a
// rate far below the others' cannot move it in a group of three or more.
func mediumOf(terms []terminal) medium {
	var rates []float64
	for _, t := range terms {
		if t.link > 0 {
			rates = append(rates, t.link)
		}
	}
	m := medium{}
	if len(terms) > 0 {
		m.self = terms[0].link
	}
	if len(rates) > 0 {
		sort.Float64s(rates)
		m.median = rates[len(rates)/2]
	}
	return m
}

// mediumNote is the reasons' account of the medium's rates ("" when none
// is known): this terminal's, the group's median and the reference.
func (s *compete) mediumNote() string {
	if s.med == (medium{}) {
		return ""
	}
	return fmt.Sprintf("; PHY rate %.0f Mbit/s, group median %.0f (reference %.0f, %.0f)", s.med.self, s.med.median, s.medAt.self, s.medAt.median)
}

// LinkFall is how far the medium must have slowed since an elasticity
// episode began for its queue to count as the medium's: both this
// terminal's rate and the group's median under LinkFall × their values at
// the start. A fifth is above the tick-to-tick wobble of a sampling rate
// controller at a steady load and far under what ARF does when contention
// rises (54 → 12–20 Mbit/s mean in the lab, docs/results.md).
const LinkFall = 0.8

// slowedSince reports whether the medium m runs clearly slower than at m0.
// It needs this terminal's own rate, which no peer can misreport, and the
// group's median: a medium whose rates are unknown has not slowed.
func (m medium) slowedSince(m0 medium) bool {
	fell := func(now, then float64) bool { return then > 0 && now > 0 && now < LinkFall*then }
	return fell(m.self, m0.self) && fell(m.median, m0.median)
}

// LinkMemory is the weight per evaluation that the reference medium keeps
// while the group's queue is at its target (atTarget): about 7 s of
// half-life at 0.5 s.
const LinkMemory = 0.95

// atTarget is the reference medium after an evaluation at which the group's
// queue was at its target: the medium now, or the reference so far decayed
// by LinkMemory where that is faster. Rate adaptation swings the rates tick
// to tick (testbed2012's ARF: 46, 39, 43, 32 Mbit/s in four ticks at the
// target); taken as it was at the last such tick the reference was a dip
// (32 Mbit/s), the medium's next slowing to 22–31 was not "slower", and one
// agent's verdict took six coop terminals off (dynamic-2013 quick, lab,
// 2026-11-26). A medium that stays slower becomes the reference within a
// few seconds.
func (m medium) atTarget(ref medium) medium {
	return medium{self: max(m.self, LinkMemory*ref.self), median: max(m.median, LinkMemory*ref.median)}
}

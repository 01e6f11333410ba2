package policy

import (
	"fmt"
	"time"
)

// The group's queue probe has one leader (docs/policies.md, coop step 3b).
//
// The probe measures the group's delivery, and every terminal used to judge
// it from its own view: its own delivery now and its peers' a status
// interval late. Under rate adaptation that oscillates (the lab's
// testbed2012 profile, ARF, 6 terminals at 4 ms: the group's delivery swings
// between 1.0 and 2.8 MB/s every 3–4 s) those views differ by up to 3 × for
// the same probe, and so did the terminals' schedules after their verdicts:
// in one epoch two terminals probed up while two probed down and two not at
// all, each measuring a probe the group was not making (docs/results.md,
// thirty-third session). agree only mended the learned value, a status
// interval after the verdicts, and not the schedules.
//
// So the terminal with the lowest sender id among those that advertise a
// learned value (the peers' protocol's TLV 15; ids are random per start)
// leads: it plans each epoch's probe at the epoch before's last evaluation
// (planNext), announces the plan (ProbePlan, TLV 18) and judges it; the
// others take its learned value and, in the epoch its plan names, the
// plan's, for the probe's phase (its whole epoch for a held probe). The plan
// is announced half an evaluation to a status interval before its epoch
// begins, so the followers' windows move with the leader's, not a status
// interval and an evaluation after them. A group without ids (a view built
// without the peers' protocol) keeps the majority rule (agree).

// ProbePlan is the queue probe the group's leader announces
// (Decision.Plan, PeerView.Plan; the peers' protocol's TLVs 18 and 19): its
// windows use Segments per contender in the wall-clock probe epoch Epoch —
// the index of the epochs of ProbeEpochTicks evaluations since 1970
// (epochAt), modulo 2^32 — from From evaluations into it on (0: its start;
// probeEnd: a chained probe, in the epoch's second half), for as long as
// the leader announces it (until its verdict; follow). The zero value
// announces none.
type ProbePlan struct {
	Epoch    uint32
	Segments uint32
	From     uint32
	// Access: the plan's windows share the capacity per access (the
	// group's learned split, or a split probe's: coop_split.go); false: at
	// equal rates.
	Access bool
}

// probeLeader returns the peer whose probe this terminal (id self; 0 =
// unknown, which never leads) follows: the one with the lowest id among the
// peers that advertise a learned value, where that is lower than self
// (follow). ids reports whether any peer takes part in the leadership (an
// id and a learned value): then the majority rule (agree) is not used.
func probeLeader(self uint64, peers []PeerView) (leader PeerView, follow, ids bool) {
	for _, p := range peers {
		if p.ID == 0 || p.QueueSegments == 0 {
			continue
		}
		if !ids || p.ID < leader.ID {
			leader = p
		}
		ids = true
	}
	follow = ids && (self == 0 || leader.ID < self)
	return leader, follow, ids
}

// follow makes this terminal's queue per contender the leader l's: its
// learned value and, in the epoch its plan names, from the evaluation the
// plan begins at (ProbePlan.From), the plan's for as long as the leader
// announces it — until it has judged the probe (announced), at the latest
// the epoch's end. Until the thirty-eighth session a plan was in force only
// for the probe's phase (or the whole epoch for a held probe), and a
// follower that heard the leader's last status before its verdict stepped
// back to the old value at the verdict's evaluation, whether the probe was
// adopted or not: on 802.11ac at 100 Mbit/s (lab, heterogeneous) followers
// went from 8 to 2 segments per contender and a tick later to the chained
// step's 32 (window bounds 16 → 9 → 41), inside the chained step's
// settling. Its own probe's state is dropped: should it lead later (the
// leader left), its measurement starts again (restart). The leader's split
// (coop_split.go) is taken the same way: its learned one, and in its plan's
// phase the plan's. It returns a note when the learned value or split
// changed.
func (q *queueProbe) follow(cp CoopParams, now time.Time, period time.Duration, l PeerView) string {
	was, wasAccess := q.learned(cp), q.access
	*q = queueProbe{segs: peerSegments(cp, l.QueueSegments), following: true, access: l.Access}
	q.lead, q.leadAccess = q.segs, q.access
	if e, phase, ok := epochAt(now, period); ok && l.Plan.Segments > 0 && l.Plan.Epoch == uint32(e) {
		s := peerSegments(cp, l.Plan.Segments)
		from := int64(min(l.Plan.From, ProbeEpochTicks)) * int64(period)
		q.epoch, q.second = e, from > 0 // a chained probe's phase runs to the epoch's end (coop.groupProbing)
		if phase >= from {
			q.lead, q.leadAccess = s, l.Plan.Access // until the leader judges it: then it no longer announces it (announced)
		}
	}
	var note string
	if q.segs != was {
		note = fmt.Sprintf("queue per contender %.0f → %.0f segments: the group's probe leader's", was, q.segs)
	}
	if q.access != wasAccess {
		note = joinReasons(note, fmt.Sprintf("split %s → %s: the group's probe leader's", splitName(wasAccess), splitName(q.access)))
	}
	return note
}

// announced returns the probe this terminal, leading, announces: the next
// epoch's once planned (planNext), else this epoch's while it is in force
// and not yet judged; none when following.
func (q *queueProbe) announced(cp CoopParams) ProbePlan {
	switch {
	case q.following:
		return ProbePlan{}
	case q.plan.dir != 0 && q.plan.split:
		return ProbePlan{Epoch: uint32(q.plan.epoch), Segments: uint32(q.learned(cp)), Access: !q.access}
	case q.plan.dir != 0:
		return ProbePlan{Epoch: uint32(q.plan.epoch), Segments: uint32(q.probeValue(cp, q.plan.dir)), Access: q.access}
	case q.open():
		p := ProbePlan{Epoch: uint32(q.epoch), Segments: uint32(q.probeTo(cp)), Access: q.accessNow()}
		if q.second {
			p.From = probeEnd
		}
		return p
	}
	return ProbePlan{}
}

// secondHalf reports whether a chained probe (chain; a leader's, for a
// follower) runs in epoch e: its phase lasts to the epoch's end.
func (q *queueProbe) secondHalf(e int64) bool { return q.second && q.epoch == e }

package analysis

import (
	"math"
	"slices"

	"github.com/coopcc/coopcc/policy"
	"github.com/coopcc/coopcc/schema"
)

// StationBounds returns the bound events that applied to station's flows:
// those of the station's own agent (bounds/<station>.jsonl) or, in a run
// whose agent ran on the server (run.json server_agent: it bounded what the
// server sent), the server's events for the station's address and for every
// destination (Dst ""). Nil when no agent bounded the station.
func StationBounds(run Run, station string) []BoundEvent {
	if evs := run.Bounds[station]; len(evs) > 0 || !run.Info.ServerAgent {
		return evs
	}
	addr := ""
	for _, st := range run.Info.Stations {
		if st.Name == station {
			addr = st.Addr
		}
	}
	var out []BoundEvent
	for _, e := range run.Bounds[schema.ServerName] {
		if e.Dst == "" || (addr != "" && e.Dst == addr) {
			out = append(out, e)
		}
	}
	return out
}

// CompetingTimes reads a station's bound events (StationBounds) for its
// policy's competitive mode (schema.BoundEvent.Mode "competing": coop found
// that the queue did not follow the group's windows) over the window
// [from, to] of run time (seconds): the share of the window spent in it and
// the time of the first entry, seconds after from (0 when it was in force at
// from). Each event's mode holds until the next event; before the first
// one, and after an event that names none (control off), none is in force.
// Both are NaN when no event names a mode (a policy with one mode, an agent
// from before modes were recorded), and first is NaN when the mode never
// came in the window.
func CompetingTimes(run Run, evs []BoundEvent, from, to float64) (share, first float64) {
	share, first = math.NaN(), math.NaN()
	if to <= from || !slices.ContainsFunc(evs, func(e BoundEvent) bool { return e.Mode != "" }) {
		return share, first
	}
	in := 0.0
	for i, e := range evs {
		if e.Mode != string(policy.ModeCompeting) {
			continue
		}
		start, end := run.RunTime(e.T), to
		if i+1 < len(evs) {
			end = min(end, run.RunTime(evs[i+1].T))
		}
		start = max(start, from)
		if end <= start {
			continue
		}
		in += end - start
		if math.IsNaN(first) {
			first = start - from
		}
	}
	return in / (to - from), first
}

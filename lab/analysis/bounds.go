package analysis

import "github.com/coopcc/coopcc/schema"

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

package analysis

import (
	"maps"
	"slices"
)

// NothingMode is the mode that runs no coopcc at all: the kernel's CUBIC,
// what a terminal gets by doing nothing.
const NothingMode = "cubic"

// KindRatio is what one kind of terminal (a scenario group: "phone-ac";
// "unmanaged" for the terminals of no group that run no coopcc) got in a
// run group against what the same kind got at the same point without
// coopcc (NothingMode, the key otherwise the same). Below 1, the group's
// policy was worse than doing nothing for those terminals: issue 11's bar
// is that coop never is for a terminal that runs it.
type KindRatio struct {
	Key, Mode, Kind string
	// Mbps and Nothing are the kind's mean goodput per terminal over the
	// valid runs of the group and of its reference.
	Mbps, Nothing Stat
	Ratio         float64 // Mbps.Mean / Nothing.Mean
}

// KindRatios returns the ratio of every kind of terminal of every group
// whose reference (NothingMode at the same point) has valid runs with that
// kind, the reference groups themselves left out; in the groups' order,
// kinds by name.
func KindRatios(groups []GroupSummary) []KindRatio {
	ref := map[string]GroupSummary{}
	for _, g := range groups {
		if g.Mode == NothingMode {
			ref[withoutParams(g.Key, "mode")] = g
		}
	}
	var out []KindRatio
	for _, g := range groups {
		r, ok := ref[withoutParams(g.Key, "mode")]
		if g.Mode == NothingMode || !ok {
			continue
		}
		for _, kind := range slices.Sorted(maps.Keys(g.GroupMbps)) {
			a, b := g.GroupMbps[kind], r.GroupMbps[kind]
			if a.N == 0 || b.N == 0 || !(b.Mean > 0) {
				continue
			}
			out = append(out, KindRatio{Key: g.Key, Mode: g.Mode, Kind: kind, Mbps: a, Nothing: b, Ratio: a.Mean / b.Mean})
		}
	}
	return out
}

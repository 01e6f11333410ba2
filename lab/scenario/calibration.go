package scenario

import (
	"fmt"
	"maps"
)

// This file holds what papers/003's per-terminal calibration needs from a
// scenario: runs of one terminal kind alone (sweep.alone), the static
// policy's bounds swept as multiples of a per-group base cwnd
// (sweep.bound_multiplier, terminals.group.cwnd_base), and per-group policy
// parameters to run with the bounds found (terminals.group.policy).

// DefaultCwndBase is the base cwnd of sweep.bound_multiplier when a group
// sets none: Linux's initial window of 10 segments. **[interpretation]**
// papers/003 takes "the cwnd of the default run with the best weighted
// fairness" and does not give its value.
const DefaultCwndBase = 10

// AloneAll is the sweep.alone value that runs every terminal.
const AloneAll = "all"

// Limits of the calibration keys.
const (
	maxBoundMultiplier = 1024
	maxCwndBase        = 65535
)

// checkCalibration validates sweep.alone, sweep.bound_multiplier and the
// groups' cwnd_base and policy tables.
func (s *Scenario) checkCalibration(add func(string, ...any)) {
	groups := map[string]bool{}
	for i, g := range s.Terminals.Groups {
		key := fmt.Sprintf("terminals.group[%d]", i)
		groups[groupName(g, i)] = true
		if g.CwndBase < 0 || g.CwndBase > maxCwndBase {
			add("%s.cwnd_base %d: want 1..%d segments (0 = %d)", key, g.CwndBase, maxCwndBase, DefaultCwndBase)
		}
		for name := range g.Policy {
			if !isPolicy(name) {
				add("%s.policy.%s: unknown policy (known: %v)", key, name, PolicyNames())
			}
		}
	}
	if len(s.Sweep.Alone) > 0 && len(s.Terminals.Groups) == 0 {
		add("sweep.alone: needs [[terminals.group]] entries (it names the group whose terminal runs alone)")
	}
	for _, a := range s.Sweep.Alone {
		if a != AloneAll && len(s.Terminals.Groups) > 0 && !groups[a] {
			add("sweep.alone %q: want %q or a group name (%v)", a, AloneAll, sortedKeys(groups))
		}
	}
	if dup := firstDup(s.Sweep.Alone); dup != "" {
		add("sweep.alone: value %s listed twice", dup)
	}
	if len(s.Sweep.BoundMultiplier) == 0 {
		return
	}
	for _, k := range s.Sweep.BoundMultiplier {
		if k < 1 || k > maxBoundMultiplier {
			add("sweep.bound_multiplier %d: want 1..%d", k, maxBoundMultiplier)
		}
	}
	if dup := firstDup(s.Sweep.BoundMultiplier); dup != "" {
		add("sweep.bound_multiplier: value %s listed twice", dup)
	}
	for _, m := range append(append([]string{}, s.Modes...), s.Quick.Modes...) {
		if md, err := ParseMode(m); err == nil && md.Policy != "static" {
			add("sweep.bound_multiplier sets the static policy's bounds: mode %q would repeat the same run for every multiplier (run it from a scenario without the multiplier, or with --only)", m)
		}
	}
}

// stationParams returns the policy parameters of one managed terminal of
// group g (nil for uniform terminals) under policy name: the scenario's
// [policy.NAME], the group's own, then the bounds of the swept multiplier
// k (0 = not swept). nil when there are none.
func (s *Scenario) stationParams(name string, g *Group, k int) map[string]any {
	var out map[string]any
	set := func(m map[string]any) {
		if len(m) == 0 {
			return
		}
		if out == nil {
			out = map[string]any{}
		}
		maps.Copy(out, m)
	}
	set(s.Policy[name])
	base := DefaultCwndBase
	if g != nil {
		set(g.Policy[name])
		if g.CwndBase > 0 {
			base = g.CwndBase
		}
	}
	if k > 0 && name == "static" {
		set(map[string]any{"static_lo": (k - 1) * base, "static_hi": k * base})
	}
	return out
}

func groupName(g Group, i int) string {
	if g.Name != "" {
		return g.Name
	}
	return fmt.Sprintf("group%d", i+1)
}

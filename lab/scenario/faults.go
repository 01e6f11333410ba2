package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Fault kinds of [[faults]] (docs/scenarios.md, "Faults").
const (
	FaultKill      = "kill"       // SIGKILL the agent at `at`, start it again at `restart`
	FaultDrop      = "drop"       // drop a fraction of status datagrams between `at` and `until`
	FaultClockSkew = "clock_skew" // the agent's peer-protocol clock is off by `skew` (whole run)
	FaultInsider   = "insider"    // a key holder broadcasts a chosen status between `at` and `until`
)

// FaultKinds are the kinds a [[faults]] entry may have.
var FaultKinds = []string{FaultKill, FaultDrop, FaultClockSkew, FaultInsider}

// Drop directions: the status datagrams a terminal receives, sends, or both.
const (
	DropIn   = "in"
	DropOut  = "out"
	DropBoth = "both"
)

// NoFaults is the sweep.faults value of runs without any fault set.
const NoFaults = "none"

// Fault is one [[faults]] entry. Times are after the traffic start and
// scale with the traffic duration (--quick, --duration) like every start and
// stop time. Which keys a kind reads is in docs/scenarios.md; a key another
// kind reads is refused.
type Fault struct {
	Kind string `toml:"kind"`
	// Set names the fault set this fault belongs to, for sweep.faults; ""
	// = every run.
	Set string `toml:"set"`
	// Terminals are station numbers (1 = sta1), a list or a range.
	Terminals IntList  `toml:"terminals"`
	At        Duration `toml:"at"`
	// Until ends a drop or an insider (0 = the end of the traffic).
	Until Duration `toml:"until"`
	// Restart starts a killed agent again (0 = it stays dead).
	Restart Duration `toml:"restart"`
	// Direction and Fraction of a drop.
	Direction string  `toml:"direction"`
	Fraction  float64 `toml:"fraction"`
	// Skew of a clock_skew: the agent's clock runs this far ahead
	// (negative: behind).
	Skew Offset `toml:"skew"`
	// The insider's status (coopcc peer send): delivery rate and
	// capability, RTTs, active flows, cwnd, and its send interval.
	Rate     Rate     `toml:"rate"`
	SRTT     Duration `toml:"srtt"`
	MinRTT   Duration `toml:"min_rtt"`
	Flows    int      `toml:"flows"`
	Cwnd     int      `toml:"cwnd"`
	Interval Duration `toml:"interval"`
}

// RunFault is a fault of one run: its times scaled, its terminals named.
type RunFault struct {
	Index     int      `json:"index"` // position in the scenario's [[faults]]
	Kind      string   `json:"kind"`
	Set       string   `json:"set,omitempty"`
	Stations  []string `json:"stations"`
	At        Duration `json:"at"`
	Until     Duration `json:"until,omitempty"`
	Restart   Duration `json:"restart,omitempty"`
	Direction string   `json:"direction,omitempty"`
	Fraction  float64  `json:"fraction,omitempty"`
	Skew      Offset   `json:"skew,omitempty"`
	Rate      Rate     `json:"rate,omitempty"`
	SRTT      Duration `json:"srtt,omitempty"`
	MinRTT    Duration `json:"min_rtt,omitempty"`
	Flows     int      `json:"flows,omitempty"`
	Cwnd      int      `json:"cwnd,omitempty"`
	Interval  Duration `json:"interval,omitempty"`
}

// Limits of the insider's status: the peer protocol's ranges
// (peer.MaxRate, peer.MaxActiveFlows, peer.MaxCwnd, peer.MaxRTT).
const (
	maxInsiderRate  = 100e9
	maxInsiderFlows = 65535
	maxInsiderCwnd  = 1_000_000
	maxInsiderRTT   = 60 * time.Second
	maxSkew         = time.Hour
)

// checkFaults validates the [[faults]] entries and sweep.faults. maxN is
// the largest terminal count of any run (terminal numbers above the
// smallest count are checked per run by Expand).
func (s *Scenario) checkFaults(add func(string, ...any), maxN int) {
	sets := map[string]bool{}
	for i, f := range s.Faults {
		key := fmt.Sprintf("faults[%d]", i)
		if !slices.Contains(FaultKinds, f.Kind) {
			add("%s.kind %q: want one of %s", key, f.Kind, strings.Join(FaultKinds, ", "))
			continue
		}
		key += " (" + f.Kind + ")"
		if f.Set != "" {
			if !nameRE.MatchString(f.Set) || f.Set == NoFaults {
				add("%s.set %q: want a-z, 0-9, '-' or '_' (not %q, which means no faults)", key, f.Set, NoFaults)
			}
			sets[f.Set] = true
		}
		checkFaultKeys(add, key, f)
		checkFaultTerminals(add, key, f, maxN)
		checkFaultTimes(add, key, f, s.Traffic.Duration)
		checkFaultValues(add, key, f)
	}
	s.checkFaultSets(add, sets)
}

// checkFaultKeys reports the keys of fault f that its kind does not read.
func checkFaultKeys(add func(string, ...any), key string, f Fault) {
	unused := func(name string, set bool) {
		if set {
			add("%s: key %s does not apply to kind %s (docs/scenarios.md, Faults)", key, name, f.Kind)
		}
	}
	isInsider, isDrop := f.Kind == FaultInsider, f.Kind == FaultDrop
	unused("restart", f.Kind != FaultKill && f.Restart != 0)
	unused("until", !isDrop && !isInsider && f.Until != 0)
	unused("direction", !isDrop && f.Direction != "")
	unused("fraction", !isDrop && f.Fraction != 0)
	unused("skew", f.Kind != FaultClockSkew && f.Skew != 0)
	unused("at", f.Kind == FaultClockSkew && f.At != 0)
	for _, k := range []struct {
		name string
		set  bool
	}{{"rate", f.Rate != 0}, {"srtt", f.SRTT != 0}, {"min_rtt", f.MinRTT != 0}, {"flows", f.Flows != 0},
		{"cwnd", f.Cwnd != 0}, {"interval", f.Interval != 0}} {
		unused(k.name, !isInsider && k.set)
	}
}

// checkFaultTerminals checks the stations fault f applies to (the scenario
// has at most maxN).
func checkFaultTerminals(add func(string, ...any), key string, f Fault, maxN int) {
	if len(f.Terminals) == 0 {
		add("%s.terminals: list the station numbers it applies to (1 = sta1), e.g. [1] or \"1..3\"", key)
	}
	if f.Kind == FaultInsider && len(f.Terminals) > 1 {
		add("%s.terminals: the insider sends from one terminal's namespace; give one station number", key)
	}
	for _, k := range f.Terminals {
		if k < 1 || k > max(maxN, 1) {
			add("%s.terminals: station %d does not exist (the scenario has at most %d terminals)", key, k, maxN)
		}
	}
	if dup := firstDup(f.Terminals); dup != "" {
		add("%s.terminals: station %s listed twice", key, dup)
	}
}

// checkFaultTimes checks fault f's times against the traffic's duration end
// (both scale together).
func checkFaultTimes(add func(string, ...any), key string, f Fault, end Duration) {
	if f.At >= end {
		add("%s.at %v: must be before the end of the traffic (%v)", key, f.At, end)
	}
	switch f.Kind {
	case FaultKill:
		if f.Restart != 0 && f.Restart <= f.At {
			add("%s.restart %v: must be after at (%v), or left out to keep the agent dead", key, f.Restart, f.At)
		}
		if f.Restart >= end {
			add("%s.restart %v: must be before the end of the traffic (%v)", key, f.Restart, end)
		}
	case FaultDrop, FaultInsider:
		if f.Until != 0 && f.Until <= f.At {
			add("%s.until %v: must be after at (%v), or left out for the end of the traffic", key, f.Until, f.At)
		}
		if f.Until > end {
			add("%s.until %v: after the end of the traffic (%v)", key, f.Until, end)
		}
	}
}

// checkFaultValues checks the values fault f's kind reads.
func checkFaultValues(add func(string, ...any), key string, f Fault) {
	switch f.Kind {
	case FaultDrop:
		if !(f.Fraction > 0 && f.Fraction <= 1) {
			add("%s.fraction %v: want the share of status datagrams to drop, in (0, 1]", key, f.Fraction)
		}
		if f.Direction != DropIn && f.Direction != DropOut && f.Direction != DropBoth {
			add("%s.direction %q: want \"in\" (status the terminals receive), \"out\" (they send) or \"both\"", key, f.Direction)
		}
	case FaultClockSkew:
		if f.Skew == 0 || f.Skew.D() < -maxSkew || f.Skew.D() > maxSkew {
			add("%s.skew %v: want a non-zero offset within ±1h, e.g. \"10s\" or \"-3s\"", key, f.Skew)
		}
	case FaultInsider:
		if f.Rate < 0 || f.Rate > maxInsiderRate {
			add("%s.rate %v: want 0..100Gbps (the peer protocol's range)", key, f.Rate)
		}
		for _, d := range []struct {
			name string
			v    Duration
		}{{"srtt", f.SRTT}, {"min_rtt", f.MinRTT}} {
			if d.v.D() > maxInsiderRTT {
				add("%s.%s %v: at most 60s (the peer protocol's range)", key, d.name, d.v)
			}
		}
		if f.Flows < 0 || f.Flows > maxInsiderFlows {
			add("%s.flows %d: want 0..65535", key, f.Flows)
		}
		if f.Cwnd < 0 || f.Cwnd > maxInsiderCwnd {
			add("%s.cwnd %d: want 0..1000000 segments", key, f.Cwnd)
		}
		if f.Interval != 0 && (f.Interval.D() < 10*time.Millisecond || f.Interval.D() > time.Minute) {
			add("%s.interval %v: want 10ms..1m (0 = the agents' 300ms)", key, f.Interval)
		}
	}
}

// checkFaultSets checks sweep.faults against the sets the [[faults]]
// entries name.
func (s *Scenario) checkFaultSets(add func(string, ...any), sets map[string]bool) {
	// sweep.faults: "none" or the names of sets.
	for _, v := range s.Sweep.Faults {
		if v != NoFaults && !sets[v] {
			add("sweep.faults %q: no [[faults]] entry has set = %q (known sets: %s; %q = no faults)", v, v, strings.Join(sortedKeys(sets), ", "), NoFaults)
		}
	}
	if dup := firstDup(s.Sweep.Faults); dup != "" {
		add("sweep.faults: value %s listed twice", dup)
	}
	if len(s.Sweep.Faults) > 0 {
		for _, set := range sortedKeys(sets) {
			if !slices.Contains(s.Sweep.Faults, set) {
				add("faults: set %q is not in sweep.faults (%s): add it, or drop the entries' set to apply them to every run", set, strings.Join(s.Sweep.Faults, ", "))
			}
		}
	} else if len(sets) > 0 {
		add("faults: entries name sets (%s) but sweep.faults does not list them: add sweep.faults = [\"none\", ...] or drop the sets", strings.Join(sortedKeys(sets), ", "))
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// runFaults returns the faults of a run: those without a set and those of
// the run's set (sweep.faults; "" = no sweep), times scaled, terminals
// checked against the run's stations.
func (s *Scenario) runFaults(r *Run, set string, sc func(Duration) Duration) error {
	for i, f := range s.Faults {
		if f.Set != "" && f.Set != set {
			continue
		}
		rf := RunFault{Index: i, Kind: f.Kind, Set: f.Set, At: sc(f.At), Until: sc(f.Until), Restart: sc(f.Restart),
			Direction: f.Direction, Fraction: f.Fraction, Skew: f.Skew, Rate: f.Rate, SRTT: f.SRTT, MinRTT: f.MinRTT,
			Flows: f.Flows, Cwnd: f.Cwnd, Interval: f.Interval}
		if (f.Kind == FaultDrop || f.Kind == FaultInsider) && rf.Until == 0 {
			rf.Until = r.Length
		}
		for _, k := range f.Terminals {
			if k > len(r.Stations) {
				return fmt.Errorf("scenario %s: faults[%d] names station %d, but run %s has %d terminals", s.Name, i, k, r.ID, len(r.Stations))
			}
			st := r.Stations[k-1]
			if r.Mode.Kind == KindPolicy && !st.Agent && (f.Kind == FaultKill || f.Kind == FaultClockSkew) {
				return fmt.Errorf("scenario %s: faults[%d] (%s) names %s, which runs no agent in run %s (unmanaged)", s.Name, i, f.Kind, st.Name, r.ID)
			}
			rf.Stations = append(rf.Stations, st.Name)
		}
		r.Faults = append(r.Faults, rf)
	}
	return nil
}

// Offset is a signed Duration: a string ("10s", "-3s") or a number of
// seconds.
type Offset time.Duration

// D returns the value as a time.Duration.
func (o Offset) D() time.Duration { return time.Duration(o) }

// String formats the offset like a time.Duration.
func (o Offset) String() string { return time.Duration(o).String() }

// UnmarshalTOML implements toml.Unmarshaler.
func (o *Offset) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		p, err := time.ParseDuration(strings.TrimSpace(x))
		if err != nil {
			return fmt.Errorf("offset %q: want e.g. \"10s\", \"-2.5s\" or a number of seconds", x)
		}
		*o = Offset(p)
	case int64:
		*o = Offset(time.Duration(x) * time.Second)
	case float64:
		*o = Offset(time.Duration(x * float64(time.Second)))
	default:
		return fmt.Errorf("offset: want a string like \"10s\" or a number of seconds, got %T", v)
	}
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (o Offset) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

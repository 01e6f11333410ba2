package scenario

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"time"
)

// Run is one fully specified experiment: one mode, one point of the sweep,
// one repetition.
type Run struct {
	ID    string   `json:"id"`
	Index int      `json:"index"` // 0-based position in the expanded list
	Mode  Mode     `json:"mode"`
	N     int      `json:"n"`
	Delay Duration `json:"delay"`
	Rep   int      `json:"rep"` // 1-based
	// Params holds the value of every sweep axis of this run by axis name
	// (n, delay, and the others that were swept), formatted as in the id.
	Params   map[string]string `json:"params"`
	WLAN     WLAN              `json:"wlan"`
	Wired    Wired             `json:"wired"`
	Traffic  Traffic           `json:"traffic"`
	Stations []Station         `json:"stations"`
	// Length is how long the traffic lasts: the latest stop time.
	Length Duration `json:"length"`
	// PolicyParams are the scenario's [policy.NAME] values for this run's policy.
	PolicyParams map[string]any `json:"policy_params,omitempty"`
	// AgentArgs are extra `coopcc agent` flags from the scenario's [agent].
	AgentArgs []string `json:"agent_args,omitempty"`
	// ServerAgent runs one agent in the server's namespace, with
	// PolicyParams, that bounds what the server sends to the managed
	// stations (agent.on = "server"); the stations then run none.
	ServerAgent bool `json:"server_agent,omitempty"`
	// Faults are the scenario's [[faults]] that apply to this run.
	Faults []RunFault `json:"faults,omitempty"`
	// SampleAgents asks the runner to poll the agents' status (agents.jsonl):
	// set in every run of a scenario with [[faults]], with or without
	// faults of its own, so that runs of one sweep are measured alike.
	SampleAgents bool `json:"sample_agents,omitempty"`
}

// Station is one terminal of a run.
type Station struct {
	Name       string   `json:"name"` // sta1..staN
	Group      string   `json:"group,omitempty"`
	Managed    bool     `json:"managed"` // runs the agent (policy modes only)
	Agent      bool     `json:"agent"`   // the agent actually runs in this run
	CC         string   `json:"cc"`      // kernel CC before any agent
	PHYMbps    float64  `json:"phy_mbps"`
	FER        float64  `json:"fer"`
	Mobility   string   `json:"mobility,omitempty"`
	Start      Duration `json:"start"`
	Stop       Duration `json:"stop"`
	ExtraDelay Duration `json:"extra_delay"`
	MaxMbps    float64  `json:"max_mbps,omitempty"` // throughput alone, from the group (0 = unknown)
	Direction  string   `json:"direction"`          // up (the station sends) | down (the server sends)
	// RateControl is the terminal's rate controller (empty: constant).
	RateControl string `json:"rate_control,omitempty"`
	// PER is the terminal link's per-rate frame error table.
	PER map[string]float64 `json:"per,omitempty"`
	// Sysctl is set in the terminal's namespace before traffic starts.
	Sysctl map[string]string `json:"sysctl,omitempty"`
	// PolicyParams are the parameters this terminal's agent gets: the
	// run's PolicyParams with the group's own and a swept bound multiplier
	// applied (policy modes, managed terminals only).
	PolicyParams map[string]any `json:"policy_params,omitempty"`
}

// Options changes how a scenario expands.
type Options struct {
	Quick bool // apply the scenario's [quick] reductions
	// Duration, when set, replaces the traffic duration (after Quick); every
	// start and stop time scales with it.
	Duration Duration
	// Repetitions, when > 0, replaces the number of repetitions (after
	// Quick).
	Repetitions int
	// FirstRep, when > 0, is the number of the first repetition (default
	// 1): runs made by separate invocations, numbered apart, have distinct
	// ids — so `lab report` pools their directories — and distinct
	// emulator seeds (the seed is derived from the id).
	FirstRep int
}

// MaxRep is the largest repetition number a run can have.
const MaxRep = 10000

// axis is one sweep dimension.
type axis struct {
	name   string
	labels []string
	apply  func(*runBuild, int)
}

type runBuild struct {
	n         int
	managed   Managed
	delay     Duration
	wiredRate Rate
	apQSize   int
	mobility  string
	faultSet  string // sweep.faults value ("" = no sweep)
	alone     string // sweep.alone value ("" or AloneAll = every terminal)
	multiple  int    // sweep.bound_multiplier value (0 = no sweep)
}

// Expand turns the scenario into its list of runs. Run ids are stable: the
// same scenario always gives the same ids in the same order. The order
// interleaves modes innermost (repetition outermost), so slow drift of the
// machine affects every mode alike.
func (s *Scenario) Expand(opt Options) ([]Run, error) {
	modes, reps, sw, scale, err := s.applyOptions(opt)
	if err != nil {
		return nil, err
	}
	first := max(opt.FirstRep, 1)
	if opt.FirstRep < 0 || first+reps-1 > MaxRep {
		return nil, fmt.Errorf("first repetition %d with %d repetitions: the repetitions would be numbered %d..%d; want numbers within 1..%d", opt.FirstRep, reps, opt.FirstRep, opt.FirstRep+reps-1, MaxRep)
	}
	base := runBuild{n: s.Terminals.Count, managed: s.Terminals.Managed, delay: s.Wired.Delay,
		wiredRate: s.Wired.Rate, apQSize: s.WLAN.APQueueSize}
	if len(s.Terminals.Groups) > 0 {
		base.n = s.maxTerminals() // the groups' counts summed
	}
	axes := sweepAxes(sw)
	parsed := make([]Mode, len(modes))
	for i, m := range modes {
		md, err := ParseMode(m)
		if err != nil {
			return nil, err
		}
		parsed[i] = md
	}
	total := reps * len(parsed)
	for _, a := range axes {
		total *= len(a.labels)
	}
	if total > 10000 {
		return nil, fmt.Errorf("scenario %s expands to %d runs; at most 10000 (reduce the sweep)", s.Name, total)
	}
	var runs []Run
	idx := make([]int, len(axes))
	for rep := first; rep < first+reps; rep++ {
		for {
			b := base
			params := map[string]string{}
			for i, a := range axes {
				a.apply(&b, idx[i])
				params[a.name] = a.labels[idx[i]]
			}
			params["n"] = fmt.Sprint(b.n)
			params["delay"] = durationLabel(b.delay)
			for _, m := range parsed {
				r, err := s.buildRun(m, b, params, rep, scale)
				if err != nil {
					return nil, err
				}
				r.Index = len(runs)
				runs = append(runs, r)
			}
			if !advance(idx, axes) {
				break
			}
		}
	}
	return runs, nil
}

// applyOptions returns the modes, repetitions and sweep the options select
// (the [quick] reductions, --repetitions) and the factor every time of the
// traffic schedule is scaled by (quick.duration, --duration).
func (s *Scenario) applyOptions(opt Options) (modes []string, reps int, sw Sweep, scale float64, err error) {
	modes, reps, sw, scale = s.Modes, s.Repetitions, s.Sweep, 1.0
	if opt.Quick {
		q := s.Quick
		if len(q.Modes) > 0 {
			modes = q.Modes
		}
		reps = max(q.Repetitions, 1)
		if len(q.N) > 0 {
			sw.N = q.N
		}
		if len(q.Delay) > 0 {
			sw.Delay = q.Delay
		}
		if len(q.Managed) > 0 {
			sw.Managed = q.Managed
		}
		if len(q.WiredRate) > 0 {
			sw.WiredRate = q.WiredRate
		}
		if q.Duration > 0 {
			scale = q.Duration.Seconds() / s.Traffic.Duration.Seconds()
		}
	}
	if opt.Duration > 0 {
		if opt.Duration.D() < time.Second {
			return nil, 0, sw, 0, fmt.Errorf("duration %v: want at least 1s", opt.Duration)
		}
		scale = opt.Duration.Seconds() / s.Traffic.Duration.Seconds()
	}
	if opt.Repetitions < 0 || opt.Repetitions > 100 {
		return nil, 0, sw, 0, fmt.Errorf("repetitions %d: want 1..100", opt.Repetitions)
	}
	if opt.Repetitions > 0 {
		reps = opt.Repetitions
	}
	return modes, reps, sw, scale, nil
}

// sweepAxes returns the axes of a sweep, in the order run ids name them.
func sweepAxes(sw Sweep) []axis {
	var axes []axis
	if len(sw.N) > 0 {
		axes = append(axes, axis{"n", intLabels(sw.N), func(b *runBuild, i int) { b.n = sw.N[i] }})
	}
	if len(sw.Delay) > 0 {
		l := make([]string, len(sw.Delay))
		for i, d := range sw.Delay {
			l[i] = durationLabel(d)
		}
		axes = append(axes, axis{"delay", l, func(b *runBuild, i int) { b.delay = sw.Delay[i] }})
	}
	if len(sw.Managed) > 0 {
		axes = append(axes, axis{"managed", intLabels(sw.Managed), func(b *runBuild, i int) { b.managed = Managed{Count: sw.Managed[i], set: true} }})
	}
	if len(sw.WiredRate) > 0 {
		l := make([]string, len(sw.WiredRate))
		for i, r := range sw.WiredRate {
			l[i] = r.String()
		}
		axes = append(axes, axis{"wired_rate", l, func(b *runBuild, i int) { b.wiredRate = sw.WiredRate[i] }})
	}
	if len(sw.APQueueSize) > 0 {
		axes = append(axes, axis{"ap_queue_size", intLabels(sw.APQueueSize), func(b *runBuild, i int) { b.apQSize = sw.APQueueSize[i] }})
	}
	if len(sw.Mobility) > 0 {
		axes = append(axes, axis{"mobility", sw.Mobility, func(b *runBuild, i int) { b.mobility = sw.Mobility[i] }})
	}
	if len(sw.Faults) > 0 {
		axes = append(axes, axis{"faults", sw.Faults, func(b *runBuild, i int) { b.faultSet = sw.Faults[i] }})
	}
	if len(sw.Alone) > 0 {
		axes = append(axes, axis{"alone", sw.Alone, func(b *runBuild, i int) {
			b.alone = sw.Alone[i]
			if b.alone != AloneAll {
				b.n = 1
			}
		}})
	}
	if len(sw.BoundMultiplier) > 0 {
		axes = append(axes, axis{"bound_multiplier", intLabels(sw.BoundMultiplier), func(b *runBuild, i int) { b.multiple = sw.BoundMultiplier[i] }})
	}
	return axes
}

// advance moves the odometer idx over axes one step (the last axis
// fastest) and reports false when it wrapped around.
func advance(idx []int, axes []axis) bool {
	for k := len(axes) - 1; k >= 0; k-- {
		idx[k]++
		if idx[k] < len(axes[k].labels) {
			return true
		}
		idx[k] = 0
	}
	return false
}

// idAxes is the order of axes in run ids after the mode.
var idAxes = []string{"n", "delay", "managed", "wired_rate", "ap_queue_size", "mobility", "faults", "alone", "bound_multiplier"}

func (s *Scenario) buildRun(m Mode, b runBuild, params map[string]string, rep int, scale float64) (Run, error) {
	r := Run{Mode: m, N: b.n, Delay: b.delay, Rep: rep, Params: map[string]string{},
		WLAN: s.WLAN, Wired: s.Wired, Traffic: s.Traffic}
	r.Wired.Delay = b.delay
	r.Wired.Rate = b.wiredRate
	r.WLAN.APQueueSize = b.apQSize
	if m.APQueue != "" {
		r.WLAN.APQueue = m.APQueue
	}
	parts := []string{"mode=" + m.Name}
	for _, k := range idAxes {
		if v, ok := params[k]; ok {
			parts = append(parts, k+"="+v)
			r.Params[k] = v
		}
	}
	parts = append(parts, fmt.Sprintf("rep=%d", rep))
	r.ID = strings.Join(parts, ",")
	if m.Kind == KindPolicy {
		r.PolicyParams = s.Policy[m.Policy]
		r.ServerAgent = s.Agent.On == AgentOnServer
		r.AgentArgs = s.agentArgs()
	}
	sc := func(d Duration) Duration { // scaled, rounded to the millisecond
		return Duration(time.Duration(math.Round(float64(d)*scale/1e6)) * time.Millisecond)
	}
	if len(s.Terminals.Groups) > 0 {
		s.addGroupStations(&r, b, sc)
	} else if err := s.addUniformStations(&r, b, sc); err != nil {
		return Run{}, err
	}
	for _, st := range r.Stations {
		if st.Stop > r.Length {
			r.Length = st.Stop
		}
		if st.Stop <= st.Start {
			return Run{}, fmt.Errorf("scenario %s: %s of run %s stops (%v) before it starts (%v)", s.Name, st.Name, r.ID, st.Stop, st.Start)
		}
		if st.Stop.D()-st.Start.D() < time.Second {
			return Run{}, fmt.Errorf("scenario %s: %s of run %s runs under 1s", s.Name, st.Name, r.ID)
		}
	}
	if err := s.runFaults(&r, b.faultSet, sc); err != nil {
		return Run{}, err
	}
	r.SampleAgents = len(s.Faults) > 0 && m.Kind == KindPolicy
	return r, nil
}

// agentArgs are the command-line options every agent of a run gets from
// the [agent] table.
func (s *Scenario) agentArgs() []string {
	var args []string
	if s.Agent.MonitorInterval > 0 {
		args = append(args, "--monitor-interval", s.Agent.MonitorInterval.String())
	}
	if s.Agent.Lease > 0 {
		args = append(args, "--lease", s.Agent.Lease.String())
	}
	return append(args, s.Agent.Args...)
}

// stationSpec is what a terminal's entry ([terminals] or one of its
// [[terminals.group]]) says of one station; zero values take the
// scenario's defaults (newStation).
type stationSpec struct {
	group        string
	managed      bool
	phy, fer     float64
	mobility, cc string
	start, stop  Duration
	extraDelay   Duration
	grp          *Group // the group it comes from; nil for uniform terminals
	maxMbps      float64
	direction    string // the group's traffic direction ("" = traffic.direction)
}

// addGroupStations adds the stations of [[terminals.group]] entries to r
// (only the first of the group b.alone names when the run is an alone run).
func (s *Scenario) addGroupStations(r *Run, b runBuild, sc func(Duration) Duration) {
	for gi, g := range s.Terminals.Groups {
		name := groupName(g, gi)
		count := g.Count
		if b.alone != "" && b.alone != AloneAll {
			if b.alone != name {
				continue
			}
			count = 1 // the group's first terminal, alone on the network
		}
		for i := 0; i < count; i++ {
			start := g.Start + Duration(int64(i)*int64(g.Stagger))
			s.addStation(r, b, sc, stationSpec{group: name, managed: g.Managed == nil || *g.Managed,
				phy: g.PHYMbps, fer: g.FER, mobility: g.Mobility, cc: g.CC, start: start, stop: s.stopOr(g.Stop),
				extraDelay: g.ExtraDelay, grp: &s.Terminals.Groups[gi], maxMbps: g.MaxMbps, direction: g.Direction})
		}
	}
}

// addUniformStations adds b.n terminals of the [terminals] table to r, the
// first k of them managed (k from b.managed, at most b.n: a coexistence
// sweep's managed = min(k, n)).
func (s *Scenario) addUniformStations(r *Run, b runBuild, sc func(Duration) Duration) error {
	t := s.Terminals
	if b.n < 1 {
		return fmt.Errorf("scenario %s: run %s has no terminals (set terminals.count or sweep.n)", s.Name, r.ID)
	}
	k := b.managed.Count
	if b.managed.All {
		k = b.n
	}
	k = min(k, b.n)
	for i := 0; i < b.n; i++ {
		group := ""
		if !b.managed.All && b.managed.Count > 0 {
			group = "unmanaged"
			if i < k {
				group = "managed"
			}
		}
		s.addStation(r, b, sc, stationSpec{group: group, managed: i < k, phy: t.PHYMbps, mobility: t.Mobility,
			start: t.Start + Duration(int64(i)*int64(t.Stagger)), stop: s.stopOr(t.Stop), extraDelay: t.ExtraDelay})
	}
	return nil
}

// stopOr is d, or the traffic's duration when d is 0.
func (s *Scenario) stopOr(d Duration) Duration {
	if d == 0 {
		return s.Traffic.Duration
	}
	return d
}

// addStation appends the station sp describes to r: the scenario's
// defaults where sp leaves a value out, the run's swept mobility, times
// scaled by sc, and the congestion control and agent of r's mode.
func (s *Scenario) addStation(r *Run, b runBuild, sc func(Duration) Duration, sp stationSpec) {
	t := s.Terminals
	k := len(r.Stations) + 1
	phy, fer, mob, cc := sp.phy, sp.fer, sp.mobility, sp.cc
	if phy == 0 {
		phy = r.WLAN.DataMbps
	}
	if fer == 0 {
		fer = t.FER
	}
	if fer == 0 {
		fer = r.WLAN.FER
	}
	if b.mobility != "" {
		mob = b.mobility // a swept mobility applies to every terminal
	}
	if cc == "" {
		cc = t.CC
	}
	st := Station{Name: fmt.Sprintf("sta%d", k), Group: sp.group, Managed: sp.managed, PHYMbps: phy, FER: fer, Direction: s.Traffic.Direction,
		Mobility: mob, Start: sc(sp.start), Stop: sc(sp.stop), MaxMbps: sp.maxMbps,
		ExtraDelay: sp.extraDelay + Duration(int64(k-1)*int64(s.Wired.ExtraDelayStep))}
	if sp.direction != "" {
		st.Direction = sp.direction
	}
	st.RateControl, st.PER = r.WLAN.RateControl, t.PER
	if t.RateControl != "" {
		st.RateControl = t.RateControl
	}
	if len(t.Sysctl) > 0 {
		st.Sysctl = maps.Clone(t.Sysctl)
	}
	if grp := sp.grp; grp != nil {
		if grp.RateControl != "" {
			st.RateControl = grp.RateControl
		}
		if grp.PER != nil {
			st.PER = grp.PER
		}
		if len(grp.Sysctl) > 0 && st.Sysctl == nil {
			st.Sysctl = map[string]string{}
		}
		maps.Copy(st.Sysctl, grp.Sysctl)
	}
	switch r.Mode.Kind {
	case KindKernel:
		// The mode's CC on the terminals that stand for the
		// middleware's users; hosts outside it (an unmanaged group,
		// the n − k of a coexistence sweep) keep their own.
		st.CC = r.Mode.CC
		if !sp.managed {
			st.CC = cc
		}
	case KindPolicy:
		st.Agent = sp.managed && !r.ServerAgent
		st.CC = cc
		if st.Agent {
			st.CC = "cubic"
			st.PolicyParams = s.stationParams(r.Mode.Policy, sp.grp, b.multiple)
		}
	default:
		st.CC = cc
	}
	r.Stations = append(r.Stations, st)
}

func intLabels(l []int) []string {
	out := make([]string, len(l))
	for i, v := range l {
		out[i] = fmt.Sprint(v)
	}
	return out
}

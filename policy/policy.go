// Package policy turns a view of this terminal's TCP flows and of its peers'
// reported status into congestion-window bounds {lo, hi} (in segments) for the
// datapath to enforce on the kernel's own CUBIC.
//
// The package is pure: no I/O, no clocks (time comes in View.Now), no global
// mutable state. Policies may keep state between calls (hysteresis, cadence,
// estimates); a Policy value is not safe for concurrent use.
//
// Named policies:
//
//   - static: fixed bounds from Params.
//   - hirai2013: cwnd_max = (BDP − α)/(MSS·N), BDP = 20 Mbit/s × RTT, every 10 s (papers/004).
//   - hayakawa2015: Tables 2 and 3, phases A/B, smaller of the two lookups, every 0.5 s (papers/000).
//   - hayakawa2016: BWmax·N^(−0.15)·minRTT/(1.5 KB·N), on at ratio_rtt > 6.0,
//     cwnd 1 while on and ratio_rtt > 5.0, every 0.5 s (papers/001).
//   - coop: this project's model-based policy: capacity estimated from peers'
//     delivery rates and the shared queueing delay, max-min shares by demand,
//     equal rates across base RTTs, a smooth multiplicative control law, and a
//     lower bound against non-congestion loss (see coop.go and docs/policies.md).
//
// The calibration of papers/003 (sweep plan and knee finder) is in calibrate.go;
// the fairness indexes are in the subpackage policy/fairness.
package policy

import (
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/coopcc/coopcc/airtime"
)

// FlowView is what the policy sees of one of this terminal's own TCP flows.
type FlowView struct {
	Dst          netip.Addr
	Cwnd, MSS    uint32 // segments, bytes
	SRTT, MinRTT time.Duration
	DeliveryRate float64 // bytes/s
	// RateSampled: DeliveryRate is the kernel's last delivery-rate sample
	// (one ACK's), not the bytes acknowledged over an interval — a flow the
	// agent sees for the first time has no interval yet. One sample
	// scatters by ±10 % around what the flow carries.
	RateSampled bool
	AppLimited  bool
	// Download marks a flow this terminal receives: its bound is the window
	// advertised to the remote sender (Cwnd is then what the sender has in
	// flight, SRTT the receive-side RTT).
	Download bool
}

// PeerView is one live peer's reported status (the peer protocol's fields).
type PeerView struct {
	ActiveFlows  int
	SRTT, MinRTT time.Duration
	DeliveryRate float64 // bytes/s, aggregate over the peer's uploads
	Demand       uint64  // bytes waiting to be sent (informational)
	AppLimited   bool
	Capability   float64 // bytes/s the peer reaches when alone (0 = unknown)
	Lo, Hi       uint32  // the peer's current bounds, segments
	Cwnd         uint32  // sum of the cwnds of its active uploads, segments (0 = unknown)
	// QueueSegments is the queue per contender the peer's coop has learned
	// (0 = none advertised).
	QueueSegments uint32
	// Plan is the queue probe the peer announces for its group to follow
	// (zero = none; coop_lead.go).
	Plan ProbePlan
	// Access: the peer's coop shares the group's capacity per access, the
	// split its group's probe leader learned (coop_split.go); false: equal
	// rates.
	Access bool
	// ID is the peer's sender id (random per start; 0 = unknown): the
	// group's probe leader is the terminal with the lowest.
	ID uint64
	// LinkRate is the PHY rate the peer's WLAN interface transmits at,
	// Mbit/s (0 = unknown).
	LinkRate float64
	// Air is the peer's airtime over its last interval: the channel's busy
	// share and its own (zero = unknown; package airtime).
	Air airtime.Shares
	// Sent is when the peer sent this status, in this terminal's clock
	// (zero = unknown): how old what it reports is. A live peer keeps its
	// last status until it expires, also when the statuses it sent since
	// were lost.
	Sent time.Time
}

// View is the input of one decision. Peers are the live peers, not self.
type View struct {
	Now time.Time
	// ID is this terminal's sender id in the peers' protocol (0 = unknown).
	ID    uint64
	Flows []FlowView
	Peers []PeerView
	// LinkRate is the PHY rate this terminal's WLAN interface transmits
	// at, Mbit/s, as its driver reports it (0 = unknown).
	LinkRate float64
	// Air is this terminal's airtime over the last interval, as its
	// driver reports it: the channel's busy share and its own
	// transmissions' and receptions' (zero = unknown; package airtime).
	Air airtime.Shares
	// PeakRate is the largest delivery rate one of this terminal's flows
	// carried recently, B/s, decaying with RatePeakHalfLife (RatePeak; 0 =
	// unknown). It is this terminal's own measurement, never a peer's:
	// ClampDecision lets a lower bound restore it.
	PeakRate float64
}

// Bounds are cwnd bounds in segments. Hi 0 = no upper bound, Lo 0 = no lower
// bound. Restart asks that the kernel's congestion control of the
// destination's flows restart once, as a new connection starts (state reset,
// slow start; datapath.Bounds). No shipped policy asks it today.
type Bounds struct {
	Lo, Hi  uint32
	Restart bool
}

// Decision is a policy's output.
//
// Active=false means "apply no bounds at all" (the agent removes whatever it
// set); Default and PerDst are then empty. When Active, Default applies to
// flows whose destination has no PerDst entry (zero Bounds = unbounded) and
// PerDst holds one entry per destination of the current flows.
type Decision struct {
	Active  bool
	Default Bounds
	PerDst  map[netip.Addr]Bounds
	Reason  string
	// QueueSegments is what this terminal advertises to its peers as the
	// queue per contender it works at (coop's queue probe; 0 = nothing).
	QueueSegments uint32
	// Plan is the queue probe this terminal announces to its peers as the
	// group's probe leader (zero = none; coop_lead.go).
	Plan ProbePlan
	// Access is what this terminal advertises as its group's split of the
	// capacity: per access (true) or equal rates (coop_split.go).
	Access bool
	// Probe is what the queue probe did at this evaluation: a verdict, a
	// value taken from the group ("" = nothing), for the agent's log.
	Probe string
	// Mode is what the policy is doing, where it says ("" = it does not).
	Mode Mode
	// Reversed: this evaluation ended competitive mode before its time
	// because competing did not pay (coop: the group's delivery fell and
	// its RTT grew; docs/policies.md, coop step 9).
	Reversed bool
}

// Mode names what a policy that has more than one way of bounding is doing
// (Decision.Mode). The agent reports it (status, metrics, its events file)
// and the lab's analysis times it.
type Mode string

const (
	// ModeCooperative: coop bounds the windows to the group's share (its
	// control law; before the first estimate, a lower bound only).
	ModeCooperative Mode = "cooperative"
	// ModeCompeting: coop's competitive mode — the group's queue did not
	// follow its windows (hosts without coopcc, or a bottleneck
	// elsewhere): no upper bound and a lower bound that competes, for the
	// off period (docs/policies.md, coop step 9).
	ModeCompeting Mode = "competing"
)

// BoundsFor returns the bounds d gives the flows to dst: its own entry in
// PerDst, or Default.
func (d Decision) BoundsFor(dst netip.Addr) Bounds {
	if b, ok := d.PerDst[dst]; ok {
		return b
	}
	return d.Default
}

// Policy maps views to decisions. Implementations may keep state
// (hysteresis, cadence, estimates) but do no I/O.
type Policy interface {
	Name() string
	Decide(View) Decision
}

// Params configures the policies. The zero value of every field means "use
// the documented default" (see Defaults); New fills them in.
type Params struct {
	// MSS is the segment size in bytes used when a flow does not report its
	// own. Default 1448 (Ethernet MTU 1500 with TCP timestamps).
	MSS uint32 `toml:"mss" json:"mss,omitempty"`
	// BWmax is the link capacity in bit/s if known, 0 = unknown.
	// hirai2013 uses it as its bandwidth (default 20 Mbit/s there),
	// hayakawa2016 as its BWmax (default 19 Mbit/s there), coop ignores it.
	BWmax float64 `toml:"bwmax" json:"bwmax,omitempty"`
	// Alpha is hirai2013's margin α in bytes subtracted from the BDP. The
	// paper gives no value; default 0.
	Alpha float64 `toml:"alpha" json:"alpha,omitempty"`
	// StaticLo, StaticHi are the static policy's bounds, segments
	// (default 0/0 = no bounds, i.e. the static policy does nothing).
	StaticLo uint32 `toml:"static_lo" json:"static_lo,omitempty"`
	StaticHi uint32 `toml:"static_hi" json:"static_hi,omitempty"`
	// HiraiInterval is hirai2013's adjustment period. Default 10 s (papers/004 §IV-B).
	HiraiInterval time.Duration `toml:"hirai_interval" json:"hirai_interval,omitempty"`
	// EvalInterval is hayakawa2015/2016's evaluation period. Default 0.5 s.
	EvalInterval time.Duration `toml:"eval_interval" json:"eval_interval,omitempty"`
	// SegmentBytes is hayakawa2016's "segment size (1.5 Kbyte)". Default 1500.
	SegmentBytes float64 `toml:"segment_bytes" json:"segment_bytes,omitempty"`
	// Hayakawa2016Exponent is the exponent e of f(N) = N^(−e). Default 0.15.
	Hayakawa2016Exponent float64 `toml:"hayakawa2016_exponent" json:"hayakawa2016_exponent,omitempty"`
	// Hayakawa2016On is the ratio_rtt above which control switches on (default 6.0);
	// Hayakawa2016Cut the ratio_rtt above which, while on, the cwnd is set to 1 (default 5.0).
	Hayakawa2016On  float64 `toml:"hayakawa2016_on" json:"hayakawa2016_on,omitempty"`
	Hayakawa2016Cut float64 `toml:"hayakawa2016_cut" json:"hayakawa2016_cut,omitempty"`
	// Coop configures the coop policy.
	Coop CoopParams `toml:"coop" json:"coop,omitempty"`
}

// Defaults returns p with every zero field replaced by its documented default.
func (p Params) Defaults() Params {
	if p.MSS == 0 {
		p.MSS = 1448
	}
	if p.HiraiInterval <= 0 {
		p.HiraiInterval = 10 * time.Second
	}
	if p.EvalInterval <= 0 {
		p.EvalInterval = 500 * time.Millisecond
	}
	if !(p.SegmentBytes > 0) {
		p.SegmentBytes = 1500
	}
	if !(p.Hayakawa2016Exponent > 0) {
		p.Hayakawa2016Exponent = 0.15
	}
	if !(p.Hayakawa2016On > 0) {
		p.Hayakawa2016On = 6.0
	}
	if !(p.Hayakawa2016Cut > 0) {
		p.Hayakawa2016Cut = 5.0
	}
	p.Coop = p.Coop.Defaults()
	return p
}

// Validate reports the first parameter that cannot be used.
func (p Params) Validate() error {
	switch {
	case math.IsNaN(p.BWmax) || math.IsInf(p.BWmax, 0) || p.BWmax < 0:
		return fmt.Errorf("link capacity BWmax %v bit/s: want a finite value >= 0 (0 = unknown)", p.BWmax)
	case math.IsNaN(p.Alpha) || math.IsInf(p.Alpha, 0) || p.Alpha < 0:
		return fmt.Errorf("margin alpha %v bytes: want a finite value >= 0", p.Alpha)
	case p.StaticHi != 0 && p.StaticLo > p.StaticHi:
		return fmt.Errorf("static bounds lo %d > hi %d: want lo <= hi (hi 0 = no upper bound)", p.StaticLo, p.StaticHi)
	case math.IsNaN(p.SegmentBytes) || math.IsInf(p.SegmentBytes, 0) || p.SegmentBytes < 0:
		return fmt.Errorf("segment size %v bytes: want a finite value > 0", p.SegmentBytes)
	case p.Hayakawa2016Cut > p.Hayakawa2016On && p.Hayakawa2016On > 0:
		return fmt.Errorf("hayakawa2016 thresholds: cut %v > on %v: want cut <= on", p.Hayakawa2016Cut, p.Hayakawa2016On)
	}
	return p.Coop.Validate()
}

// paramKeys are the Params keys (toml names) each policy reads besides mss.
var paramKeys = map[string][]string{
	"static":       {"static_lo", "static_hi"},
	"hirai2013":    {"bwmax", "alpha", "hirai_interval"},
	"hayakawa2015": {"eval_interval"},
	"hayakawa2016": {"bwmax", "eval_interval", "segment_bytes", "hayakawa2016_exponent", "hayakawa2016_on", "hayakawa2016_cut"},
	"coop":         {"coop"},
}

// ParamKeys returns the Params keys (toml names: "static_hi", "coop", ...)
// that the named policy reads, so that a key meant for another policy is
// refused instead of silently ignored.
func ParamKeys(name string) ([]string, error) {
	ks, ok := paramKeys[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q: use one of %s", name, strings.Join(Names(), ", "))
	}
	return append([]string{"mss"}, ks...), nil
}

// Names lists the known policy names.
func Names() []string {
	return []string{"static", "hirai2013", "hayakawa2015", "hayakawa2016", "coop"}
}

// New builds the named policy with p (zero fields take their defaults).
func New(name string, p Params) (Policy, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("policy %q: %w", name, err)
	}
	p = p.Defaults()
	switch name {
	case "static":
		return &static{p: p}, nil
	case "hirai2013":
		return &hirai2013{p: p}, nil
	case "hayakawa2015":
		return &hayakawa2015{p: p}, nil
	case "hayakawa2016":
		return &hayakawa2016{p: p, on: map[netip.Addr]bool{}}, nil
	case "coop":
		return newCoop(p), nil
	}
	return nil, fmt.Errorf("unknown policy %q: want one of %s", name, strings.Join(Names(), ", "))
}

// ActiveTerminals returns N = 1 (this terminal) + the number of peers with
// active uploads that are not application-limited (ActiveFlows > 0 and
// !AppLimited). Self always counts: the bounds are only ever applied to our
// own flows, which exist whenever the bounds matter. App-limited peers do not
// count because they do not compete for a share of the window
// **[interpretation: the papers count "terminals communicating"; an
// app-limited terminal barely loads the AP]**.
func ActiveTerminals(peers []PeerView) int {
	n := 1
	for _, pv := range peers {
		if pv.ActiveFlows > 0 && !pv.AppLimited {
			n++
		}
	}
	return n
}

// RatioRTT is the papers' ratio_rtt = RTT / min_rtt (expression 1). Unknown
// (zero or negative) RTTs give 1, i.e. "not inflated".
func RatioRTT(srtt, minRTT time.Duration) float64 {
	if srtt <= 0 || minRTT <= 0 {
		return 1
	}
	return float64(srtt) / float64(minRTT)
}

// dstGroup is the aggregate of this terminal's flows to one destination: the
// conservative (largest) ratio_rtt, the smallest known min RTT, the largest
// SRTT, the summed delivery rate and the flows' MSS.
type dstGroup struct {
	Dst          netip.Addr
	Flows        int
	Bulk         int // flows that are not app-limited
	SRTT, MinRTT time.Duration
	Ratio        float64
	Rate         float64
	RateSampled  bool // some flow's rate in Rate is a sample (FlowView.RateSampled)
	MSS          uint32
}

// groupByDst aggregates flows per destination, sorted by address for
// deterministic output. Flows with an invalid Dst are grouped under the zero
// netip.Addr.
//
// SRTT and Ratio come from the group's network-limited flows when it has
// any, from all its flows otherwise: an idle connection keeps the SRTT of
// its last exchange for as long as it lives (iperf3's control connection:
// 452 ms on a 256 ms path, measured during its setup, for the whole run),
// which is no measurement of the path now. MinRTT is the smallest of all.
func groupByDst(flows []FlowView, defMSS uint32) []dstGroup {
	idx := map[netip.Addr]int{}
	var gs []dstGroup
	type rtts struct {
		srtt  time.Duration
		ratio float64
	}
	var all, bulk []rtts
	for _, f := range flows {
		i, ok := idx[f.Dst]
		if !ok {
			i = len(gs)
			idx[f.Dst] = i
			gs = append(gs, dstGroup{Dst: f.Dst, Ratio: 0})
			all = append(all, rtts{})
			bulk = append(bulk, rtts{})
		}
		g := &gs[i]
		g.Flows++
		r := RatioRTT(f.SRTT, f.MinRTT)
		all[i].srtt, all[i].ratio = max(all[i].srtt, f.SRTT), max(all[i].ratio, r)
		if !f.AppLimited {
			g.Bulk++
			bulk[i].srtt, bulk[i].ratio = max(bulk[i].srtt, f.SRTT), max(bulk[i].ratio, r)
		}
		if f.MinRTT > 0 && (g.MinRTT == 0 || f.MinRTT < g.MinRTT) {
			g.MinRTT = f.MinRTT
		}
		if finitePos(f.DeliveryRate) {
			g.Rate += f.DeliveryRate
			g.RateSampled = g.RateSampled || f.RateSampled
		}
		if f.MSS > 0 && (g.MSS == 0 || f.MSS < g.MSS) {
			g.MSS = f.MSS
		}
	}
	for i := range gs {
		src := all[i]
		if gs[i].Bulk > 0 {
			src = bulk[i]
		}
		gs[i].SRTT, gs[i].Ratio = src.srtt, src.ratio
		if gs[i].MSS == 0 {
			gs[i].MSS = defMSS
		}
		if gs[i].Ratio < 1 {
			gs[i].Ratio = 1
		}
	}
	sort.Slice(gs, func(a, b int) bool { return gs[a].Dst.Less(gs[b].Dst) })
	return gs
}

// finitePos reports whether x is a finite number > 0.
func finitePos(x float64) bool { return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }

// toSegments converts a non-negative float count of segments to uint32,
// rounding down; NaN and negatives give 0, overflow saturates.
func toSegments(x float64) uint32 {
	switch {
	case math.IsNaN(x) || x <= 0:
		return 0
	case x >= math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(x)
}

// decision assembles a Decision from per-destination bounds: flows with an
// invalid destination set Default, the others PerDst.
func decision(per map[netip.Addr]Bounds, reason string) Decision {
	d := Decision{Active: true, Reason: reason}
	for dst, b := range per {
		if !dst.IsValid() {
			d.Default = b
			continue
		}
		if d.PerDst == nil {
			d.PerDst = map[netip.Addr]Bounds{}
		}
		d.PerDst[dst] = b
	}
	return d
}

// cadence decides when a periodic policy evaluates: on the first call, when
// the clock went backwards, when at least 90 % of the period has elapsed (the
// tolerance keeps a 0.5 s policy driven by a 0.5 s loop from skipping every
// other tick on jitter), or when the set of destinations changed (a new flow
// is bounded at once).
type cadence struct {
	last time.Time
	dsts []netip.Addr
}

// due reports whether to evaluate now (eval) and whether that is a periodic
// evaluation (periodic; false when only the destinations changed), and
// records the time and destinations.
func (c *cadence) due(now time.Time, period time.Duration, gs []dstGroup) (eval, periodic bool) {
	periodic = c.last.IsZero() || now.Before(c.last) || now.Sub(c.last) >= period-period/10
	changed := len(gs) != len(c.dsts)
	for i := 0; !changed && i < len(gs); i++ {
		changed = gs[i].Dst != c.dsts[i]
	}
	if changed {
		c.dsts = c.dsts[:0]
		for _, g := range gs {
			c.dsts = append(c.dsts, g.Dst)
		}
	}
	if periodic {
		c.last = now
	}
	return periodic || changed, periodic
}

// copyDecision returns d with its own PerDst map, so callers cannot alias a
// policy's cached state.
func copyDecision(d Decision) Decision {
	if d.PerDst != nil {
		m := make(map[netip.Addr]Bounds, len(d.PerDst))
		for k, v := range d.PerDst {
			m[k] = v
		}
		d.PerDst = m
	}
	return d
}

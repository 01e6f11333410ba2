// Package agent is the coopcc daemon that runs on every terminal: it wires the
// TCP monitor, the peer protocol, a policy and the datapath into one control
// loop (monitor tick → view → policy → bounds → datapath + heartbeat), and
// carries its configuration, Prometheus metrics, status socket, bound-change
// event log, single-instance lock and the guard that switches control off
// when it does not help.
//
// The loop itself (Agent) is written against small interfaces (FlowSource,
// Enforcer, PeerNode) that the real packages satisfy; Run in run.go builds the
// real ones.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/coopcc/coopcc/airtime"
	"github.com/coopcc/coopcc/internal/linkspeed"
	"github.com/coopcc/coopcc/internal/wifirate"
	"github.com/coopcc/coopcc/policy"
)

// FlowSource gives snapshots of this host's TCP flows (monitor.Monitor).
type FlowSource interface {
	Snapshot() ([]Flow, error)
}

// Enforcer writes cwnd bounds into the kernel (datapath.Datapath).
type Enforcer interface {
	Set(dst netip.Addr, b DPBounds) error
	Delete(dst netip.Addr) error
	Heartbeat() error
	Counters() (map[netip.Addr]DPCounters, error)
	Backend() string
	Close() error
}

// PeerNode is the running peer protocol (peer.Node): the live peers and
// message counters. The agent gives it its own status through OwnStatus.
type PeerNode interface {
	ID() uint64 // this terminal's sender id (0 = none yet)
	Live(now time.Time) []PeerStatus
	N(now time.Time) int
	Counters() map[string]uint64
}

// PolicyFactory builds a policy by name (policy.New with decoded params).
type PolicyFactory func(name string, params map[string]any) (Policy, error)

// Deps are the agent's parts.
type Deps struct {
	Flows     FlowSource
	Datapath  Enforcer
	Peers     PeerNode
	NewPolicy PolicyFactory
	Logger    *slog.Logger
	Events    *EventLog // nil = no event log
	// IfaceAddrs returns the managed interface's addresses (default:
	// net.InterfaceByName); flows from these sources leave through it.
	IfaceAddrs func(iface string) ([]netip.Addr, error)
	// LinkRate returns the PHY rate the WLAN interface transmits at, Mbit/s
	// (0 = none reported; default: linkRates, its ethtool link speed or,
	// when the driver has none, nl80211's transmit bitrate).
	LinkRate func(iface string) (float64, error)
	// Airtime returns the WLAN interface's cumulative airtime counters
	// (default: nl80211's survey and station durations; not used when the
	// configuration names an airtime file).
	Airtime func(iface string) (airtime.Counters, error)
}

// stateKey of the host-wide default bounds in the applied map.
var defaultDst = netip.Addr{}

// Agent is the control loop and its observable state.
type Agent struct {
	deps Deps
	log  *slog.Logger

	mu      sync.Mutex // guards everything below
	cfg     Config
	pol     Policy
	guard   *policy.Guard
	filter  flowFilter
	applied map[netip.Addr]DPBounds // what the datapath holds (invalid Addr = default)
	last    tickState
	counts  Counts
	capab   float64 // best aggregate delivery rate seen while alone (B/s)
	link    linkSmoother
	air     airMeter
	ticks   *flowTicks
	clocks  peerClocks // the peers' send times in this terminal's clock
	peak    policy.RatePeak

	wifi *wifiLink // the default LinkRate's nl80211 reader (nil with Deps.LinkRate given); closed when Run returns

	dpMu sync.Mutex // serialises datapath calls (tick vs. metrics scrape)
	blog *boundLog  // which bound changes are logged (under dpMu)
}

// Counts are the agent's own counters (exported as metrics and in status).
type Counts struct {
	Ticks          uint64 `json:"ticks"`
	MonitorErrors  uint64 `json:"monitor_errors"`
	DatapathErrors uint64 `json:"datapath_errors"`
	PolicyPanics   uint64 `json:"policy_panics"`
	BoundChanges   uint64 `json:"bound_changes"`
	// CompetingEntries counts the ticks at which the policy entered
	// competitive mode (policy.ModeCompeting: coop found the queue was not
	// the group's).
	CompetingEntries uint64 `json:"competing_entries"`
	// CompetingReversals counts the ticks at which the policy ended
	// competitive mode early because competing did not pay
	// (policy.Decision.Reversed).
	CompetingReversals uint64 `json:"competing_reversals"`
	FailOpen           uint64 `json:"fail_open"`
	Reloads            uint64 `json:"reloads"`
}

// tickState is what the last tick saw and decided.
type tickState struct {
	At        time.Time
	Flows     []Flow     // managed flows
	UpRates   []float64  // per flow: its upload rate (uploadRate; 0 unless active)
	Downloads []FlowView // the downloads among them, as the policy saw them
	Active    int
	Peers     []PeerStatus
	N         int
	Decision  Decision
	Reason    string
	Guard     policy.GuardStatus
	Own       PeerStatus
	LinkRate  float64          // the WLAN interface's PHY rate, Mbit/s (0 = unknown)
	Air       airtime.Counters // the WLAN interface's airtime over the last tick (zero = unknown)
	TickTime  time.Duration
	Err       string
}

// New builds an agent from a validated configuration.
func New(cfg Config, deps Deps) (*Agent, error) {
	if deps.Flows == nil || deps.Datapath == nil || deps.Peers == nil || deps.NewPolicy == nil {
		return nil, fmt.Errorf("agent: flows, datapath, peers and policy factory are all required")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.IfaceAddrs == nil {
		deps.IfaceAddrs = ifaceAddrs
	}
	var wifi *wifiLink
	if deps.LinkRate == nil {
		wifi = &wifiLink{open: openWifirate}
		deps.LinkRate = linkRates{ethtool: ethtoolSpeed, wifi: wifi.txBitrate}.read
	}
	if deps.Airtime == nil {
		if wifi == nil {
			wifi = &wifiLink{open: openWifirate}
		}
		deps.Airtime = wifi.airtime
	}
	a := &Agent{deps: deps, log: deps.Logger, applied: map[netip.Addr]DPBounds{}, ticks: newFlowTicks(), clocks: peerClocks{}, blog: newBoundLog(), wifi: wifi}
	if err := a.setConfig(cfg); err != nil {
		return nil, err
	}
	return a, nil
}

// setConfig applies the reloadable part of cfg (policy, filter, intervals,
// guard) and stores it.
func (a *Agent) setConfig(cfg Config) error {
	// Keep the running policy (and its state: hysteresis, cadence,
	// estimates) unless its name or parameters changed.
	a.mu.Lock()
	pol := a.pol
	same := pol != nil && a.cfg.Policy.Name == cfg.Policy.Name && reflect.DeepEqual(a.cfg.Policy.Params, cfg.Policy.Params)
	a.mu.Unlock()
	if !same {
		var err error
		if pol, err = a.deps.NewPolicy(cfg.Policy.Name, cfg.Policy.Params); err != nil {
			return fmt.Errorf("policy %q: %w", cfg.Policy.Name, err)
		}
	}
	f := flowFilter{iface: cfg.ManagedIface(), dst: cfg.DstPrefixes(), ports: cfg.Managed.Ports}
	var g *policy.Guard
	if cfg.Guard.Enabled {
		g = policy.NewGuard(policy.GuardParams{
			OnWindow: cfg.Guard.OnWindow.Duration, OffWindow: cfg.Guard.OffWindow.Duration,
			Settle: cfg.Guard.Settle.Duration, MaxCost: cfg.Guard.MaxCost, Backoff: cfg.Guard.Backoff.Duration,
		})
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cfg, a.pol, a.filter = cfg, pol, f
	// Keep a running guard's state when its settings did not change.
	if a.guard == nil || g == nil || a.guard.Params() != g.Params() {
		a.guard = g
	}
	return nil
}

// Reload applies a new configuration without a restart. It returns the keys
// that changed but only take effect after a restart (interface, group,
// datapath, observability, log format), so the caller can warn.
func (a *Agent) Reload(cfg Config) (needRestart []string, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	old := a.cfg
	a.mu.Unlock()
	if err := a.setConfig(cfg); err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.counts.Reloads++
	a.mu.Unlock()
	return RestartOnly(old, cfg), nil
}

// RestartOnly lists the settings that differ between old and new and are
// only read at start.
func RestartOnly(old, new Config) []string {
	var keys []string
	add := func(changed bool, k string) {
		if changed {
			keys = append(keys, k)
		}
	}
	add(old.Iface != new.Iface, "iface")
	add(old.Group.ID != new.Group.ID || old.Group.KeyFile != new.Group.KeyFile || old.Group.Passphrase != new.Group.Passphrase, "group key/id")
	add(old.Group.Port != new.Group.Port || old.Group.Transport != new.Group.Transport, "group.port/transport")
	add(old.Group.Interval != new.Group.Interval || old.Group.ExpiryIntervals != new.Group.ExpiryIntervals, "group.interval/expiry_intervals")
	add(old.Group.ClockSkew != new.Group.ClockSkew, "--clock-skew")
	add(old.Datapath != new.Datapath, "datapath")
	add(old.Observe != new.Observe, "observe")
	add(old.Log.Format != new.Log.Format, "log.format")
	return keys
}

// Config returns the configuration in use.
func (a *Agent) Config() Config {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg
}

// Run ticks every monitor interval until ctx ends, then removes every bound
// it wrote (the caller closes the datapath) and closes the nl80211 reader
// the ticks opened, if any. The interval is re-read after each tick so a
// reload takes effect.
func (a *Agent) Run(ctx context.Context) error {
	defer a.closeWifi()
	a.Tick(time.Now())
	for {
		t := time.NewTimer(a.Config().Monitor.Interval.Duration)
		select {
		case <-ctx.Done():
			t.Stop()
			a.clearAll("shutdown")
			return nil
		case now := <-t.C:
			a.Tick(now)
		}
	}
}

// Tick runs one iteration of the loop: it reads the kernel's flows, asks the
// policy (and the guard) for bounds, writes them, and keeps the tick's state
// for the status socket and the peer protocol.
func (a *Agent) Tick(now time.Time) {
	start := time.Now()
	a.mu.Lock()
	cfg, pol, filter, guard := a.cfg, a.pol, a.filter, a.guard
	a.counts.Ticks++
	a.mu.Unlock()

	flows, ok := a.snapshot(filter)
	if !ok {
		return
	}
	peers := a.deps.Peers.Live(now)
	n := a.deps.Peers.N(now)
	tv := a.buildView(now, cfg.Iface, cfg.Monitor.AirtimeFile, flows, peers)

	dec, reason := a.policyDecision(pol, tv.view)
	var gs policy.GuardStatus
	if guard != nil {
		dec, reason, gs = guarded(guard, cfg.Guard.Scope, now, tv, n, dec, reason)
	}

	// Every tick's decision at debug level: the bounds events are written
	// only when a bound changes, and the reasons of the ticks between are
	// what a researcher needs to follow a policy's state (`--log-level
	// debug`; in the lab, `[agent] args`).
	a.log.Debug(MsgDecision, "policy", pol.Name(), "n", n, "active", dec.Active, "reason", reason)
	if dec.Probe != "" {
		a.log.Info(MsgQueueProbe, "policy", pol.Name(), "n", n, "queue_segments", dec.QueueSegments, "access_shares", dec.Access, "note", dec.Probe)
	}
	desired := filter.desired(dec, flows)
	// A destination entry that goes away: either control ended (the
	// decision's reason says why) or no managed flow goes there any more.
	gone := reason
	if dec.Active {
		gone = "no managed flow to this destination"
	}
	applied := a.apply(now, desired, eventTag{n: n, policy: pol.Name(), mode: dec.Mode}, reason, gone)

	a.mu.Lock()
	defer a.mu.Unlock()
	if dec.Mode == policy.ModeCompeting && a.last.Decision.Mode != policy.ModeCompeting {
		a.counts.CompetingEntries++
	}
	if dec.Reversed {
		a.counts.CompetingReversals++
	}
	if n <= 1 && tv.agg > a.capab {
		a.capab = tv.agg
	}
	a.last = tickState{At: now, Flows: flows, UpRates: tv.upRates, Downloads: tv.downloads, Active: tv.active, Peers: peers, N: n, Decision: dec, Reason: reason, Guard: gs, LinkRate: tv.view.LinkRate, Air: tv.air}
	a.last.Own = a.ownStatusLocked(pol.Name())
	a.last.TickTime = time.Since(start)
	if !applied {
		a.last.Err = "datapath error (bounds removed, fail open)"
	}
}

// snapshot reads the kernel's flows and keeps the managed ones (filter). On
// a monitor error it removes every bound (fail open), counts and logs the
// error, and reports false: the tick ends there.
func (a *Agent) snapshot(filter flowFilter) ([]Flow, bool) {
	all, err := a.deps.Flows.Snapshot()
	if err != nil {
		a.mu.Lock()
		a.counts.MonitorErrors++
		n := a.counts.MonitorErrors
		a.last.Err = "monitor: " + err.Error()
		a.mu.Unlock()
		if n == 1 || n%100 == 0 {
			a.log.Error("monitor snapshot failed; bounds removed (fail open)", "err", err, "count", n)
		}
		a.clearAll("fail-open: monitor error")
		return nil, false
	}
	addrs, aerr := a.deps.IfaceAddrs(filter.iface)
	if aerr != nil && filter.iface != "" {
		a.log.Debug("interface addresses", "iface", filter.iface, "err", aerr)
	}
	return filter.apply(all, addrs), true
}

// tickView is what one tick's policy sees (view) and what the agent keeps
// of it: each flow's upload rate (0 unless active), the downloads, how many
// flows are active, this terminal's delivery (agg, B/s) and the group's
// (groupRate: agg and the peers' reports).
type tickView struct {
	view           View
	air            airtime.Counters // the interface's airtime over the tick (zero = unknown)
	upRates        []float64
	downloads      []FlowView
	active         int
	agg, groupRate float64
}

// buildView builds the policy's view of the tick at now from the managed
// flows, the live peers, the interface's PHY rate and its airtime (read from
// airFile when the configuration names one).
func (a *Agent) buildView(now time.Time, iface, airFile string, flows []Flow, peers []PeerStatus) tickView {
	tv := tickView{view: View{Now: now, Flows: make([]FlowView, 0, len(flows)), Peers: make([]PeerView, 0, len(peers))}}
	raw, lerr := a.deps.LinkRate(iface)
	if lerr != nil {
		a.log.Debug("link rate", "iface", iface, "err", lerr)
	}
	counters, airErr := a.readAirtime(airFile, iface)
	if airErr != nil && iface != "" {
		a.log.Debug("airtime", "iface", iface, "err", airErr)
	}
	a.mu.Lock()
	tv.air = a.air.observe(counters, airErr == nil && iface != "")
	tv.view.Air = tv.air.Shares()
	tv.view.LinkRate = a.link.observe(raw)
	ticks := a.ticks.observe(now, flows)
	tv.view.ID = a.deps.Peers.ID()
	a.clocks.keep(peers)
	for _, p := range peers {
		v := peerView(p)
		v.Sent = a.clocks.sent(now, p)
		tv.view.Peers = append(tv.view.Peers, v)
	}
	a.mu.Unlock()
	tv.upRates = make([]float64, len(flows))
	pathMin := pathMinRTT(flows)
	for i, f := range flows {
		if d := ticks[i]; d.Rate > 0 {
			// A download: bounded through the window this host
			// advertises, in the same budget as the uploads.
			tv.active++
			tv.agg += d.Rate
			v := downloadView(f, d, pathMin[f.Dst.Addr()])
			tv.downloads = append(tv.downloads, v)
			tv.view.Flows = append(tv.view.Flows, v)
			continue
		}
		act := isActive(f)
		// An idle flow delivers nothing now: TCP_INFO keeps its last
		// delivery-rate sample (iperf3's control connection reports the
		// rate of its setup exchange for the whole run), which as an
		// app-limited demand took up to half of the terminal's share.
		var rate float64
		if act {
			tv.active++
			rate = uploadRate(f, ticks[i])
			tv.agg += rate
		}
		tv.upRates[i] = rate
		tv.view.Flows = append(tv.view.Flows, FlowView{
			Dst: f.Dst.Addr(), Cwnd: f.Cwnd, MSS: f.MSS, SRTT: f.SRTT, MinRTT: f.MinRTT,
			DeliveryRate: rate, RateSampled: act && !ticks[i].Known, AppLimited: f.AppLimited || !act,
		})
	}
	a.mu.Lock()
	tv.view.PeakRate = a.peak.Observe(now, tv.view.Flows)
	a.mu.Unlock()
	tv.groupRate = tv.agg
	for _, p := range peers {
		tv.groupRate += float64(p.DeliveryRate)
	}
	return tv
}

// policyDecision asks the policy pol for this tick's decision and its
// reason; a policy that fails (decide) is counted and logged, and gives no
// control this tick (fail open).
func (a *Agent) policyDecision(pol Policy, view View) (Decision, string) {
	dec, err := decide(pol, view)
	if err == nil {
		return dec, dec.Reason
	}
	a.mu.Lock()
	a.counts.PolicyPanics++
	a.mu.Unlock()
	a.log.Error("policy failed; control off this tick", "policy", pol.Name(), "err", err)
	return Decision{}, "fail-open: " + err.Error()
}

// guarded passes the tick (tv, n terminals) through the guard, which
// switches control off where it does not help: it watches the group's
// delivery, or this terminal's alone with scope "self". It returns the
// decision (no bounds while the guard holds control off), its reason and the
// guard's status.
func guarded(guard *policy.Guard, scope string, now time.Time, tv tickView, n int, dec Decision, reason string) (Decision, string, policy.GuardStatus) {
	rate := tv.groupRate
	if scope == "self" {
		rate = tv.agg
	}
	gs := guard.Observe(now, policy.GuardSample{Rate: rate, Flows: tv.active, N: n, Control: dec.Active})
	if !gs.ControlOn && dec.Active {
		return Decision{Reason: dec.Reason}, "guard: " + gs.Reason, gs
	}
	return dec, reason, gs
}

// decide calls the policy on the view with its peers' reports made
// plausible, and keeps the bounds it returns in the sane range
// (policy.SanitizeView, policy.ClampDecision: whatever a key holder reports,
// no bound leaves that range). A panic becomes an error (fail open).
func decide(p Policy, v View) (d Decision, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("policy %s panicked: %v", p.Name(), r)
		}
	}()
	return policy.ClampDecision(p.Decide(policy.SanitizeView(v)), v, policy.MinHiOf(p)), nil
}

// apply makes the datapath hold exactly desired, logs an event per change and
// refreshes the heartbeat. On any datapath error it removes every bound and
// skips the heartbeat, so the lease lets TCP run unbounded (fail open).
func (a *Agent) apply(now time.Time, desired map[netip.Addr]DPBounds, tag eventTag, reason, goneReason string) bool {
	a.dpMu.Lock()
	defer a.dpMu.Unlock()
	var failed error
	// Deterministic order: default first, then by address.
	keys := make([]netip.Addr, 0, len(desired))
	for d := range desired {
		keys = append(keys, d)
	}
	slices.SortFunc(keys, func(x, y netip.Addr) int { return x.Compare(y) })
	for _, d := range keys {
		b := desired[d]
		cur, ok := a.applied[d]
		if ok && cur == b {
			continue
		}
		if err := a.deps.Datapath.Set(d, b); err != nil {
			failed = fmt.Errorf("set bounds for %s: %w", dstString(d), err)
			break
		}
		a.applied[d] = b
		if ok || b != (DPBounds{}) { // an absent entry already meant "unbounded"
			a.event(now, d, b, tag, reason)
		}
	}
	if failed == nil {
		for d := range a.applied {
			if _, ok := desired[d]; ok {
				continue
			}
			if err := a.deps.Datapath.Delete(d); err != nil {
				failed = fmt.Errorf("delete bounds for %s: %w", dstString(d), err)
				break
			}
			b := a.applied[d]
			delete(a.applied, d)
			if b != (DPBounds{}) {
				a.event(now, d, DPBounds{}, tag, goneReason)
			}
		}
	}
	if failed == nil {
		if err := a.deps.Datapath.Heartbeat(); err != nil {
			failed = fmt.Errorf("heartbeat: %w", err)
		}
	}
	if failed != nil {
		a.mu.Lock()
		a.counts.DatapathErrors++
		c := a.counts.DatapathErrors
		a.mu.Unlock()
		if c == 1 || c%100 == 0 {
			a.log.Error("datapath failed; bounds removed, heartbeat withheld (fail open)", "err", failed, "count", c)
		}
		a.clearAllLocked(now, tag, "fail-open: datapath error")
		return false
	}
	return true
}

// clearAll removes every bound the agent wrote (fail open, shutdown).
func (a *Agent) clearAll(reason string) {
	a.dpMu.Lock()
	defer a.dpMu.Unlock()
	a.mu.Lock()
	n, name := a.last.N, a.cfg.Policy.Name
	a.mu.Unlock()
	a.clearAllLocked(time.Now(), eventTag{n: n, policy: name}, reason)
}

// clearAllLocked removes every bound (a.dpMu held); the events it writes
// carry no mode: control is off.
func (a *Agent) clearAllLocked(now time.Time, tag eventTag, reason string) {
	tag.mode = ""
	a.mu.Lock()
	a.counts.FailOpen++
	a.mu.Unlock()
	for d, b := range a.applied {
		if d == defaultDst {
			_ = a.deps.Datapath.Set(d, DPBounds{})
		} else {
			_ = a.deps.Datapath.Delete(d)
		}
		delete(a.applied, d)
		if b != (DPBounds{}) {
			a.event(now, d, DPBounds{}, tag, reason)
		}
	}
}

// eventTag is what every bounds event of a tick carries besides the bounds
// and the reason: the number of terminals, the policy and its mode.
type eventTag struct {
	n      int
	policy string
	mode   policy.Mode
}

func (a *Agent) event(now time.Time, dst netip.Addr, b DPBounds, tag eventTag, reason string) {
	a.mu.Lock()
	a.counts.BoundChanges++
	a.mu.Unlock()
	if ok, skipped := a.blog.note(dstString(dst), b.Lo, b.Hi, tag.n); ok {
		a.log.Info(MsgBounds, "dst", dstString(dst), "lo", b.Lo, "hi", b.Hi, "n", tag.n, "policy", tag.policy,
			"mode", string(tag.mode), "reason", reason, "unlogged_changes", skipped)
	}
	if a.deps.Events != nil {
		e := Event{T: now, Dst: eventDst(dst), Lo: b.Lo, Hi: b.Hi, N: tag.n, Policy: tag.policy, Mode: string(tag.mode), Reason: reason}
		if err := a.deps.Events.Write(e); err != nil {
			a.log.Warn("event log write failed", "err", err)
		}
	}
}

func dstString(d netip.Addr) string {
	if !d.IsValid() {
		return "default"
	}
	return d.String()
}

func eventDst(d netip.Addr) string {
	if !d.IsValid() {
		return ""
	}
	return d.String()
}

// isActive reports whether a flow is uploading: it has bytes in flight or
// waiting to be sent. [interpretation] "active upload" in the papers is a
// flow that is sending; an idle keep-alive connection is not counted.
func isActive(f Flow) bool { return f.Unacked > 0 || f.NotSent > 0 }

// desired turns a decision into the datapath entries. The datapath's
// default entry applies to every connection of the namespace that uses the
// bounded CUBIC (loopback, other interfaces, other ports included), so it is
// only used when every flow is managed (managed.iface "-", no destination or
// port filter). Otherwise the decision's default is written per destination
// of the managed flows, and the default entry stays unbounded: flows that are
// not managed are never bounded, and a managed flow to a new destination is
// bounded from the next tick on.
func (f flowFilter) desired(dec Decision, managed []Flow) map[netip.Addr]DPBounds {
	out := map[netip.Addr]DPBounds{defaultDst: {}}
	if !dec.Active {
		return out
	}
	if f.hostWide() {
		out[defaultDst] = DPBounds(dec.Default)
	} else if dec.Default != (PBounds{}) {
		for _, fl := range managed {
			out[fl.Dst.Addr()] = DPBounds(dec.Default)
		}
	}
	for d, b := range dec.PerDst {
		out[d] = DPBounds(b)
	}
	return out
}

// hostWide reports whether every flow of the namespace is managed.
func (f flowFilter) hostWide() bool { return f.iface == "" && len(f.dst) == 0 && len(f.ports) == 0 }

// flowFilter selects the managed flows.
type flowFilter struct {
	iface string
	dst   []netip.Prefix
	ports []uint16
}

// apply keeps established flows that leave through the managed interface
// (the monitor reports it, or the source address is one of the interface's),
// go to a managed destination prefix and to a managed port.
func (f flowFilter) apply(flows []Flow, ifaceAddrs []netip.Addr) []Flow {
	out := make([]Flow, 0, len(flows))
	for _, fl := range flows {
		if fl.State != 1 {
			continue
		}
		if f.iface != "" && fl.Iface != f.iface && !slices.Contains(ifaceAddrs, fl.Src.Addr().Unmap()) {
			continue
		}
		if len(f.dst) > 0 && !slices.ContainsFunc(f.dst, func(p netip.Prefix) bool { return p.Contains(fl.Dst.Addr().Unmap()) }) {
			continue
		}
		if len(f.ports) > 0 && !slices.Contains(f.ports, fl.Dst.Port()) {
			continue
		}
		out = append(out, fl)
	}
	return out
}

func ifaceAddrs(name string) ([]netip.Addr, error) {
	if name == "" {
		return nil, nil
	}
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", name, err)
	}
	as, err := ifi.Addrs()
	if err != nil {
		return nil, fmt.Errorf("addresses of %s: %w", name, err)
	}
	var out []netip.Addr
	for _, a := range as {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out, nil
}

// linkRates reads the WLAN interface's transmit rate, Mbit/s: its ethtool
// link speed first — the lab's emulator sets a station TAP's to its PHY
// rate, so the lab reads it there as before — and, when the driver has no
// ethtool link settings (linkspeed.ErrNotSupported: a cfg80211 Wi-Fi
// interface), the transmit bitrate nl80211 reports for its station
// (internal/wifirate). It is 0 without an error when there is no interface,
// when the driver reports its ethtool speed as unknown, and when nl80211 has
// no rate (wifirate.ErrNotWireless: not Wi-Fi, not associated, cfg80211 not
// loaded); other errors (no such interface, a failed netlink exchange) are
// returned.
type linkRates struct {
	ethtool func(iface string) (float64, error) // ethtoolSpeed
	wifi    func(iface string) (float64, error) // (*wifiLink).txBitrate
}

// read is the Deps.LinkRate function.
func (l linkRates) read(iface string) (float64, error) {
	if iface == "" {
		return 0, nil
	}
	s, err := l.ethtool(iface)
	if !errors.Is(err, linkspeed.ErrNotSupported) {
		return s, err
	}
	r, err := l.wifi(iface)
	if errors.Is(err, wifirate.ErrNotWireless) {
		return 0, nil
	}
	return r, err
}

// ethtoolSpeed is iface's ethtool link speed, Mbit/s (0 when the driver
// reports it unknown), or linkspeed.ErrNotSupported when the driver has
// none. The ioctl socket is opened per call: it is one socket(2), where the
// nl80211 reader would also resolve a family and look the name up.
func ethtoolSpeed(iface string) (float64, error) {
	h, err := linkspeed.Open()
	if err != nil {
		return 0, err
	}
	defer h.Close()
	s, err := h.Get(iface)
	return float64(s), err
}

// txBitrater is what the agent uses of a wifirate.Reader.
type txBitrater interface {
	TxBitrate(ifname string) (float64, error)
	Airtime(ifname string) (airtime.Counters, error)
	Close() error
}

// openWifirate opens a wifirate.Reader (wifiLink.open).
func openWifirate() (txBitrater, error) {
	r, err := wifirate.Open()
	if err != nil {
		return nil, err
	}
	return r, nil
}

// wifiLink holds the default link-rate and airtime sources' nl80211 reader
// for the agent's lifetime, so that a tick neither opens sockets nor
// resolves the nl80211 family again. It is opened at the first reading that
// needs it (an interface without an ethtool speed, or airtime counters not
// read from a file: in the lab only an agent on the server, whose stations'
// agents read their TAP's ethtool speed and the emulator's airtime files)
// and closed when Run returns, which is the loop's only way out (a
// start-up that fails before Run never ticked, so never opened it). A tick
// after that — a caller ticking without Run — opens it again and leaves it
// to the process's exit. It is opened on the tick's thread: the agent runs
// wholly in its network namespace, as the ethtool socket and the monitor
// assume.
type wifiLink struct {
	mu   sync.Mutex
	open func() (txBitrater, error)
	r    txBitrater // nil until the first reading, and after close
}

// txBitrate reads iface's nl80211 transmit bitrate, opening the reader if
// needed (a failed open is tried again at the next reading).
func (w *wifiLink) txBitrate(iface string) (float64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.openLocked(); err != nil {
		return 0, err
	}
	return w.r.TxBitrate(iface)
}

// airtime reads iface's nl80211 airtime counters (the Deps.Airtime
// default), opening the reader as txBitrate does.
func (w *wifiLink) airtime(iface string) (airtime.Counters, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.openLocked(); err != nil {
		return airtime.Counters{}, err
	}
	return w.r.Airtime(iface)
}

// openLocked opens the reader if it is not open (w.mu held).
func (w *wifiLink) openLocked() error {
	if w.r != nil {
		return nil
	}
	r, err := w.open()
	if err != nil {
		return fmt.Errorf("nl80211: %w", err)
	}
	w.r = r
	return nil
}

// close closes the reader if it is open.
func (w *wifiLink) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.r == nil {
		return nil
	}
	err := w.r.Close()
	w.r = nil
	return err
}

// closeWifi closes the default link-rate source's nl80211 reader, if any.
func (a *Agent) closeWifi() {
	if a.wifi == nil {
		return
	}
	if err := a.wifi.close(); err != nil {
		a.log.Debug("nl80211 reader close", "err", err)
	}
}

// LinkSmoothing is the weight of a new link-speed reading in the smoothed
// link rate (an exponential average over ticks: at 0.5 s, a time constant
// of about 1.4 s). A driver reports the rate of its last frames; under rate
// adaptation that jumps a step or two from frame to frame (ARF probes up
// after 10 successes), and one reading a tick is a noisy sample of it.
const LinkSmoothing = 0.3

// linkSmoother averages the WLAN interface's link speed over ticks.
type linkSmoother struct{ avg float64 }

// observe takes one reading (Mbit/s; 0 = none) and returns the smoothed
// rate; a tick without a reading forgets the average (the interface went or
// stopped reporting).
func (l *linkSmoother) observe(r float64) float64 {
	switch {
	case !(r > 0):
		l.avg = 0
	case l.avg == 0:
		l.avg = r
	default:
		l.avg += LinkSmoothing * (r - l.avg)
	}
	return l.avg
}

package agent

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/coopcc/coopcc/policy"
)

// Metric names (docs/agent.md lists them).
var (
	mFlowCwnd    = prometheus.NewDesc("coopcc_flow_cwnd_segments", "Congestion window of a managed flow.", []string{"src", "dst"}, nil)
	mFlowSRTT    = prometheus.NewDesc("coopcc_flow_srtt_seconds", "Smoothed RTT of a managed flow.", []string{"src", "dst"}, nil)
	mFlowMinRTT  = prometheus.NewDesc("coopcc_flow_min_rtt_seconds", "Minimum RTT of a managed flow.", []string{"src", "dst"}, nil)
	mFlowRate    = prometheus.NewDesc("coopcc_flow_delivery_rate_bytes_per_second", "Delivery rate of a managed flow.", []string{"src", "dst"}, nil)
	mFlowLo      = prometheus.NewDesc("coopcc_flow_bound_lo_segments", "Lower cwnd bound that applies to a managed flow (0 = none).", []string{"src", "dst"}, nil)
	mFlowHi      = prometheus.NewDesc("coopcc_flow_bound_hi_segments", "Upper cwnd bound that applies to a managed flow (0 = none).", []string{"src", "dst"}, nil)
	mBoundLo     = prometheus.NewDesc("coopcc_bound_lo_segments", "Lower cwnd bound held by the datapath per destination (dst=\"\" is the default).", []string{"dst"}, nil)
	mBoundHi     = prometheus.NewDesc("coopcc_bound_hi_segments", "Upper cwnd bound held by the datapath per destination (dst=\"\" is the default).", []string{"dst"}, nil)
	mBoundHits   = prometheus.NewDesc("coopcc_bound_hits_total", "How often the datapath applied a bound to flows of a destination, by bound (lo/hi).", []string{"dst", "bound"}, nil)
	mRestarts    = prometheus.NewDesc("coopcc_cc_restarts_total", "Connections to a destination whose CUBIC the datapath restarted as a new connection's, on a policy's request.", []string{"dst"}, nil)
	mPeers       = prometheus.NewDesc("coopcc_peers_n", "Active terminals N (self + live peers with active uploads).", nil, nil)
	mPeersLive   = prometheus.NewDesc("coopcc_peers_live", "Live peers heard (excluding self).", nil, nil)
	mFlows       = prometheus.NewDesc("coopcc_managed_flows", "Managed flows, by whether they are active (uploading).", []string{"active"}, nil)
	mMessages    = prometheus.NewDesc("coopcc_protocol_messages_total", "Protocol messages by outcome/reason (peer counters).", []string{"reason"}, nil)
	mPolicy      = prometheus.NewDesc("coopcc_policy_active", "1 when the policy is bounding cwnd.", []string{"policy"}, nil)
	mMode        = prometheus.NewDesc("coopcc_policy_mode", "1 for the mode the policy is in (coop: cooperative, or competing beside hosts without coopcc); 0 for the others.", []string{"mode"}, nil)
	mCompeting   = prometheus.NewDesc("coopcc_policy_competing_entries_total", "How often the policy entered competitive mode (coop: the queue did not follow the group's windows).", nil, nil)
	mReversals   = prometheus.NewDesc("coopcc_policy_competing_reversals_total", "How often the policy ended competitive mode early because competing did not pay (coop: the group's delivery fell and its RTT grew).", nil, nil)
	mGuard       = prometheus.NewDesc("coopcc_guard_state", "Guard state (1 for the current state).", []string{"state"}, nil)
	mGuardCost   = prometheus.NewDesc("coopcc_guard_cost_ratio", "Throughput cost of the bounds at the guard's last comparison (1 - on/off).", nil, nil)
	mGuardOff    = prometheus.NewDesc("coopcc_guard_disables_total", "How often the guard switched control off.", nil, nil)
	mTicks       = prometheus.NewDesc("coopcc_ticks_total", "Control-loop iterations.", nil, nil)
	mErrors      = prometheus.NewDesc("coopcc_errors_total", "Errors by source (each one fails open).", []string{"source"}, nil)
	mChanges     = prometheus.NewDesc("coopcc_bound_changes_total", "Bound changes written to the datapath.", nil, nil)
	mTickSeconds = prometheus.NewDesc("coopcc_tick_duration_seconds", "Duration of the last control-loop iteration.", nil, nil)
	mLinkRate    = prometheus.NewDesc("coopcc_link_rate_bits_per_second", "PHY rate the WLAN interface transmits at, smoothed over ticks, as its driver reports it (absent when unknown).", nil, nil)
	mAir         = prometheus.NewDesc("coopcc_air_ratio", "Share of the WLAN channel's time over the last tick: busy, this terminal's own airtime (its transmissions and the frames sent to it), and another network's (foreign: busy, neither its own transmissions nor its network's frames), as its driver reports them (each absent when unknown).", []string{"kind"}, nil)
	mQueueSegs   = prometheus.NewDesc("coopcc_policy_queue_segments", "Queue per contender the policy works at (coop: its group's learned value, peer TLV 15; absent when none).", nil, nil)
	mShares      = prometheus.NewDesc("coopcc_policy_shares", "1 for the split of the capacity the policy's group uses (coop: equal_rates, or per_access, learned by its probe leader, peer TLV 20); absent with no learned queue.", []string{"split"}, nil)
	mBackend     = prometheus.NewDesc("coopcc_datapath_info", "The datapath backend in use.", []string{"backend"}, nil)
)

// Registry returns a new Prometheus registry (never the global default)
// holding the agent's collector plus the Go and process collectors.
func (a *Agent) Registry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(agentCollector{a}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

type agentCollector struct{ a *Agent }

func (c agentCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{mFlowCwnd, mFlowSRTT, mFlowMinRTT, mFlowRate, mFlowLo, mFlowHi, mBoundLo, mBoundHi,
		mBoundHits, mRestarts, mPeers, mPeersLive, mFlows, mMessages, mPolicy, mMode, mCompeting, mReversals, mGuard, mGuardCost, mGuardOff, mTicks, mErrors,
		mChanges, mTickSeconds, mBackend, mLinkRate, mAir, mQueueSegs, mShares} {
		ch <- d
	}
}

func (c agentCollector) Collect(ch chan<- prometheus.Metric) {
	g := prometheus.GaugeValue
	r := c.a.Status()
	active := 0
	for _, f := range r.Flows {
		ch <- prometheus.MustNewConstMetric(mFlowCwnd, g, float64(f.Cwnd), f.Src, f.Dst)
		if f.SRTTUs != nil {
			ch <- prometheus.MustNewConstMetric(mFlowSRTT, g, float64(*f.SRTTUs)/1e6, f.Src, f.Dst)
		}
		if f.MinRTTUs != nil {
			ch <- prometheus.MustNewConstMetric(mFlowMinRTT, g, float64(*f.MinRTTUs)/1e6, f.Src, f.Dst)
		}
		ch <- prometheus.MustNewConstMetric(mFlowRate, g, float64(f.Rate), f.Src, f.Dst)
		ch <- prometheus.MustNewConstMetric(mFlowLo, g, float64(f.Lo), f.Src, f.Dst)
		ch <- prometheus.MustNewConstMetric(mFlowHi, g, float64(f.Hi), f.Src, f.Dst)
		if f.Active {
			active++
		}
	}
	ch <- prometheus.MustNewConstMetric(mFlows, g, float64(active), "true")
	ch <- prometheus.MustNewConstMetric(mFlows, g, float64(len(r.Flows)-active), "false")
	for _, b := range r.Bounds {
		ch <- prometheus.MustNewConstMetric(mBoundLo, g, float64(b.Lo), b.Dst)
		ch <- prometheus.MustNewConstMetric(mBoundHi, g, float64(b.Hi), b.Dst)
	}
	for _, h := range r.Hits {
		ch <- prometheus.MustNewConstMetric(mBoundHits, prometheus.CounterValue, float64(h.LoHits), h.Dst, "lo")
		ch <- prometheus.MustNewConstMetric(mBoundHits, prometheus.CounterValue, float64(h.HiHits), h.Dst, "hi")
		ch <- prometheus.MustNewConstMetric(mRestarts, prometheus.CounterValue, float64(h.Restarts), h.Dst)
	}
	ch <- prometheus.MustNewConstMetric(mPeers, g, float64(r.N))
	ch <- prometheus.MustNewConstMetric(mPeersLive, g, float64(len(r.Peers)))
	for reason, v := range r.Messages {
		ch <- prometheus.MustNewConstMetric(mMessages, prometheus.CounterValue, float64(v), reason)
	}
	ch <- prometheus.MustNewConstMetric(mPolicy, g, b2f(r.PolicyOn), r.Policy)
	for _, m := range []policy.Mode{policy.ModeCooperative, policy.ModeCompeting} {
		ch <- prometheus.MustNewConstMetric(mMode, g, b2f(r.Mode == string(m)), string(m))
	}
	if q := r.Own.QueueSegments; q > 0 {
		ch <- prometheus.MustNewConstMetric(mQueueSegs, g, float64(q))
		ch <- prometheus.MustNewConstMetric(mShares, g, b2f(!r.Own.AccessShares), "equal_rates")
		ch <- prometheus.MustNewConstMetric(mShares, g, b2f(r.Own.AccessShares), "per_access")
	}
	ch <- prometheus.MustNewConstMetric(mCompeting, prometheus.CounterValue, float64(r.Counts.CompetingEntries))
	ch <- prometheus.MustNewConstMetric(mReversals, prometheus.CounterValue, float64(r.Counts.CompetingReversals))
	if r.Guard != nil {
		for _, s := range []string{policy.GuardIdle, policy.GuardOn, policy.GuardProbe, policy.GuardDisabled} {
			ch <- prometheus.MustNewConstMetric(mGuard, g, b2f(r.Guard.State == s), s)
		}
		ch <- prometheus.MustNewConstMetric(mGuardCost, g, r.Guard.Cost)
		ch <- prometheus.MustNewConstMetric(mGuardOff, prometheus.CounterValue, float64(r.Guard.Disables))
	} else {
		for _, s := range []string{policy.GuardIdle, policy.GuardOn, policy.GuardProbe, policy.GuardDisabled} {
			ch <- prometheus.MustNewConstMetric(mGuard, g, 0, s)
		}
	}
	ch <- prometheus.MustNewConstMetric(mTicks, prometheus.CounterValue, float64(r.Counts.Ticks))
	ch <- prometheus.MustNewConstMetric(mErrors, prometheus.CounterValue, float64(r.Counts.MonitorErrors), "monitor")
	ch <- prometheus.MustNewConstMetric(mErrors, prometheus.CounterValue, float64(r.Counts.DatapathErrors), "datapath")
	ch <- prometheus.MustNewConstMetric(mErrors, prometheus.CounterValue, float64(r.Counts.PolicyPanics), "policy")
	ch <- prometheus.MustNewConstMetric(mChanges, prometheus.CounterValue, float64(r.Counts.BoundChanges))
	ch <- prometheus.MustNewConstMetric(mTickSeconds, g, float64(r.TickTimeUs)/1e6)
	ch <- prometheus.MustNewConstMetric(mBackend, g, 1, r.Backend)
	if k := r.Own.LinkRateKbps; k > 0 {
		ch <- prometheus.MustNewConstMetric(mLinkRate, g, float64(k)*1000)
	}
	if a := airShares(r.Own.AirChannelUs, r.Own.AirBusyUs, r.Own.AirOwnUs); r.Own.AirChannelUs > 0 {
		ch <- prometheus.MustNewConstMetric(mAir, g, a.Busy, "busy")
		ch <- prometheus.MustNewConstMetric(mAir, g, a.Own, "own")
		if f := r.AirForeignUs; f != nil {
			ch <- prometheus.MustNewConstMetric(mAir, g, float64(*f)/float64(r.Own.AirChannelUs), "foreign")
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

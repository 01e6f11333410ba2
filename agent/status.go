package agent

import (
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/coopcc/coopcc/peer"
	"github.com/coopcc/coopcc/policy"
)

// OwnStatus is the status the peer node broadcasts for this terminal, built
// from the latest tick (safe to call from the peer node's goroutine).
func (a *Agent) OwnStatus() PeerStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last.Own
}

// ownStatusLocked summarises the managed flows of the last tick: active flows
// (bytes in flight or queued), aggregate cwnd and delivery rate of the active
// flows, their mean srtt and the smallest min RTT of the flows (active or
// not) on their destinations, demand (bytes queued, not yet
// sent), app-limited when every active flow is, capability (best aggregate
// rate seen while alone), and the bounds that apply to most active flows.
func (a *Agent) ownStatusLocked(polName string) PeerStatus {
	var s PeerStatus
	var srtt time.Duration
	perDst := map[netip.Addr]int{}
	appLimited := true
	for i, f := range a.last.Flows {
		s.Demand += uint64(f.NotSent)
		if !isActive(f) {
			continue
		}
		s.ActiveFlows++
		s.Cwnd += f.Cwnd
		if i < len(a.last.UpRates) {
			s.DeliveryRate += uint64(a.last.UpRates[i])
		}
		srtt += f.SRTT
		appLimited = appLimited && f.AppLimited
		perDst[f.Dst.Addr()]++
	}
	if s.ActiveFlows > 0 {
		s.SRTT = srtt / time.Duration(s.ActiveFlows)
	}
	// The min RTT of a path is the smallest any of its connections saw: an
	// active data connection's first samples come from its own slow-start
	// bursts, while an idle connection to the same destination (iperf3's
	// control connection) measured the empty path at setup.
	pathMin := pathMinRTT(a.last.Flows)
	for d := range perDst {
		if m := pathMin[d]; m > 0 && (s.MinRTT == 0 || m < s.MinRTT) {
			s.MinRTT = m
		}
	}
	s.AppLimited = s.ActiveFlows == 0 || appLimited
	s.Capability = uint64(a.capab)
	b := a.mostAppliedLocked(perDst)
	s.Lo, s.Hi = b.Lo, b.Hi
	s.Policy = polName
	s.QueueSegments = a.last.Decision.QueueSegments
	s.PlanEpoch, s.PlanSegments, s.PlanFrom = a.last.Decision.Plan.Epoch, a.last.Decision.Plan.Segments, a.last.Decision.Plan.From
	s.AccessShares, s.PlanAccessShares = a.last.Decision.Access, a.last.Decision.Plan.Access
	s.LinkRate = uint32(min(max(a.last.LinkRate, 0)*1000, peer.MaxLinkRate))
	s.AirChannel, s.AirBusy, s.AirOwn = airStatus(a.last.Air, peer.MaxAirChannel)
	a.addDownloadsLocked(&s)
	return s
}

// addDownloadsLocked fills the download fields of the own status from the
// last tick's downloads as the policy saw them (downloadView): their count,
// receive rate, mean receive-side RTT, the smallest base RTT of their paths
// and the receive bound applied to most of them.
func (a *Agent) addDownloadsLocked(s *PeerStatus) {
	var srtt time.Duration
	perDst := map[netip.Addr]int{}
	for _, v := range a.last.Downloads {
		s.DownFlows++
		s.DownRate += uint64(v.DeliveryRate)
		srtt += v.SRTT
		perDst[v.Dst]++
		if v.MinRTT > 0 && (s.MinRTT == 0 || v.MinRTT < s.MinRTT) {
			s.MinRTT = v.MinRTT
		}
	}
	if s.DownFlows == 0 {
		return
	}
	s.DownSRTT = srtt / time.Duration(s.DownFlows)
	s.RcvHi = a.mostAppliedLocked(perDst).Hi
}

// mostAppliedLocked returns the bounds applied to the destination with the
// most flows in perDst (the default entry's when none has its own).
func (a *Agent) mostAppliedLocked(perDst map[netip.Addr]int) DPBounds {
	b := a.applied[defaultDst]
	best := 0
	for d, c := range perDst {
		if pb, ok := a.applied[d]; ok && c > best {
			b, best = pb, c
		}
	}
	return b
}

// StatusReport is what `coopcc agent status` shows.
type StatusReport struct {
	Time       time.Time           `json:"time"`
	Iface      string              `json:"iface"`
	Group      string              `json:"group"`
	Policy     string              `json:"policy"`
	PolicyOn   bool                `json:"policy_active"`
	Mode       string              `json:"mode,omitempty"` // policy.Mode of the last decision ("" = none named)
	Reason     string              `json:"reason"`
	Backend    string              `json:"datapath_backend"`
	N          int                 `json:"n"`
	Own        PeerReport          `json:"self"`
	Peers      []PeerReport        `json:"peers"`
	Bounds     []BoundReport       `json:"bounds"`
	Hits       []HitReport         `json:"bound_hits"`
	Flows      []FlowReport        `json:"flows"`
	Guard      *policy.GuardStatus `json:"guard,omitempty"`
	Counts     Counts              `json:"counts"`
	Messages   map[string]uint64   `json:"messages"`
	LastTick   time.Time           `json:"last_tick,omitzero"`
	TickTimeUs int64               `json:"tick_time_us"`
	LastError  string              `json:"last_error,omitempty"`
	// AirForeignUs is the busy air of the last tick that was another
	// network's on the channel, µs (airtime.Counters.Foreign; absent where
	// the driver does not report its own network's receive time).
	AirForeignUs *uint32 `json:"air_foreign_us,omitempty"`
}

// BoundReport is one entry of the bounds the datapath holds.
type BoundReport struct {
	Dst string `json:"dst"` // "" = default
	Lo  uint32 `json:"lo"`
	Hi  uint32 `json:"hi"`
}

// HitReport says how often the datapath applied the bounds to the flows of
// one destination (whichever entry, per-destination or default, applied),
// and how many of its connections restarted on the policy's request.
type HitReport struct {
	Dst      string `json:"dst"`
	LoHits   uint64 `json:"lo_hits"`
	HiHits   uint64 `json:"hi_hits"`
	Restarts uint64 `json:"restarts"`
}

// FlowReport is one managed flow (keys as in `coopcc mon --json`).
type FlowReport struct {
	Src        string `json:"src"`
	Dst        string `json:"dst"`
	Cwnd       uint32 `json:"cwnd"`
	SRTTUs     *int64 `json:"srtt_us,omitempty"`
	MinRTTUs   *int64 `json:"min_rtt_us,omitempty"`
	Rate       uint64 `json:"delivery_rate_Bps"`
	Active     bool   `json:"active"`
	AppLimited bool   `json:"app_limited"`
	Lo         uint32 `json:"lo"` // bounds that apply to the flow (0 = none)
	Hi         uint32 `json:"hi"`
	// CC is the flow's congestion control as the kernel reports it. With
	// the struct_ops backend a flow on any other one (e.g. an application
	// that chose bbr) is not bounded, and lo/hi say 0.
	CC string `json:"cc,omitempty"`
}

// ccNamer is implemented by a datapath that bounds only the flows on its
// own congestion control (datapath.Datapath with struct_ops: CCName != "").
type ccNamer interface{ CCName() string }

// flowBoundsLocked returns the bounds that really apply to f: none when the
// datapath bounds through its own congestion control and f runs another
// (issue 17: a flow left on a dead instance's congestion control was
// reported bounded while it ran unbounded).
func (a *Agent) flowBoundsLocked(f Flow) DPBounds {
	if n, ok := a.deps.Datapath.(ccNamer); ok {
		if cc := n.CCName(); cc != "" && f.CC != "" && f.CC != cc {
			return DPBounds{}
		}
	}
	return a.boundsForLocked(f.Dst.Addr())
}

// boundsFor returns the bounds that apply to dst.
func (a *Agent) boundsForLocked(dst netip.Addr) DPBounds {
	if b, ok := a.applied[dst]; ok {
		return b
	}
	return a.applied[defaultDst]
}

// Status builds the status report.
func (a *Agent) Status() StatusReport {
	counters := a.datapathCounters()
	msgs := a.deps.Peers.Counters()
	a.mu.Lock()
	defer a.mu.Unlock()
	r := StatusReport{
		Time: time.Now(), Iface: a.cfg.Iface, Group: a.cfg.Group.ID, Policy: a.pol.Name(),
		PolicyOn: a.last.Decision.Active, Mode: string(a.last.Decision.Mode), Reason: a.last.Reason, Backend: a.deps.Datapath.Backend(),
		N: a.last.N, Own: peerReport(a.last.Own, true), Peers: []PeerReport{}, Counts: a.counts, Messages: msgs,
		LastTick: a.last.At, TickTimeUs: a.last.TickTime.Microseconds(), LastError: a.last.Err,
		Bounds: []BoundReport{}, Hits: []HitReport{}, Flows: []FlowReport{},
	}
	if r.Messages == nil {
		r.Messages = map[string]uint64{}
	}
	if c := a.last.Air; c.HasBSSRx && r.Own.AirChannelUs > 0 {
		us := uint32(min(c.Foreign()/time.Microsecond, time.Duration(r.Own.AirBusyUs)))
		r.AirForeignUs = &us
	}
	for _, p := range a.last.Peers {
		r.Peers = append(r.Peers, peerReport(p, false))
	}
	for d, b := range a.applied {
		r.Bounds = append(r.Bounds, BoundReport{Dst: eventDst(d), Lo: b.Lo, Hi: b.Hi})
	}
	slices.SortFunc(r.Bounds, func(x, y BoundReport) int { return strings.Compare(x.Dst, y.Dst) })
	for d, c := range counters {
		r.Hits = append(r.Hits, HitReport{Dst: eventDst(d), LoHits: c.LoApplied, HiHits: c.HiApplied, Restarts: c.Restarts})
	}
	slices.SortFunc(r.Hits, func(x, y HitReport) int { return strings.Compare(x.Dst, y.Dst) })
	for _, f := range a.last.Flows {
		b := a.flowBoundsLocked(f)
		r.Flows = append(r.Flows, FlowReport{Src: f.Src.String(), Dst: f.Dst.String(), Cwnd: f.Cwnd, SRTTUs: usOrNil(f.SRTT), MinRTTUs: usOrNil(f.MinRTT),
			Rate: f.DeliveryRate, Active: isActive(f), AppLimited: f.AppLimited, Lo: b.Lo, Hi: b.Hi, CC: f.CC})
	}
	if a.guard != nil {
		g := a.last.Guard
		r.Guard = &g
	}
	return r
}

// datapathCounters reads the bound-hit counters (errors give an empty map).
func (a *Agent) datapathCounters() map[netip.Addr]DPCounters {
	a.dpMu.Lock()
	defer a.dpMu.Unlock()
	c, err := a.deps.Datapath.Counters()
	if err != nil {
		a.log.Debug("datapath counters", "err", err)
		return nil
	}
	return c
}

// peerView turns a validated peer status into the policy's view of it.
//
// Downloads count like uploads (one budget of the medium per terminal):
// their flows and receive rate are added, and a terminal that only
// downloads reports its receive-side RTT as its SRTT and is not
// application-limited.
func peerView(p PeerStatus) PeerView {
	v := PeerView{
		ActiveFlows: int(p.ActiveFlows) + int(p.DownFlows), SRTT: p.SRTT, MinRTT: p.MinRTT,
		DeliveryRate: float64(p.DeliveryRate) + float64(p.DownRate), Demand: p.Demand, AppLimited: p.AppLimited,
		Capability: float64(p.Capability), Lo: p.Lo, Hi: p.Hi, QueueSegments: p.QueueSegments, Cwnd: p.Cwnd,
		Plan: policy.ProbePlan{Epoch: p.PlanEpoch, Segments: p.PlanSegments, From: p.PlanFrom, Access: p.PlanAccessShares}, Access: p.AccessShares, ID: p.Sender,
		LinkRate: float64(p.LinkRate) / 1000, Air: airShares(p.AirChannel, p.AirBusy, p.AirOwn),
	}
	if p.DownFlows > 0 {
		v.Cwnd = 0 // the uploads' cwnd against a bound that covers the downloads too: unknown
		v.AppLimited = false
		if p.ActiveFlows == 0 || p.DownSRTT > p.SRTT {
			v.SRTT = p.DownSRTT
		}
		if v.SRTT > 0 && v.MinRTT > v.SRTT {
			v.MinRTT = v.SRTT
		}
	}
	return v
}

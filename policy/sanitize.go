package policy

import (
	"math"
	"net/netip"
	"sort"
	"time"

	"github.com/coopcc/coopcc/airtime"
)

// Limits of what a peer's report may claim before it reaches a policy, and
// of the bounds a policy may hand to the datapath. Peers are authenticated,
// but every holder of the group key is an insider who can lie; these limits
// make a lie cost at most a bounded factor, never absurd bounds.
const (
	// PlausibleRateFactor is how far above the group's median delivery rate
	// (this terminal's own rate included) one peer's delivery rate or
	// capability may be: 802.11ac beside 802.11g is ≈ 16×.
	PlausibleRateFactor = 16
	// MaxPlausibleRate is what no WLAN station delivers: 10 Gbit/s.
	MaxPlausibleRate = 10e9 / 8
	// MinPlausibleRTT is the smallest RTT a peer may report; below it the RTT
	// is taken as unknown (0). No wireless path answers in 50 µs.
	MinPlausibleRTT = 50 * time.Microsecond
	// MaxPlausibleRTT caps reported RTTs (the peer protocol allows up to 60 s).
	MaxPlausibleRTT = 60 * time.Second
	// MaxPlausibleFlows caps one peer's active flow count.
	MaxPlausibleFlows = 256
	// MaxPlausibleLinkRate caps a reported PHY rate, Mbit/s (802.11be's
	// fastest is 46 Gbit/s).
	MaxPlausibleLinkRate = 100_000
	// MinHi is the smallest upper bound ever applied: TCP needs 2 segments
	// in flight to keep its ACK clock.
	MinHi = 2
	// LoBDPFactor bounds lo to this many times this terminal's own window
	// in flight (largest measured delivery rate × RTT): a lower bound far
	// above it only builds a queue.
	LoBDPFactor = 2
	// MinLoCap is the lower bound's cap when the terminal has no measurement.
	MinLoCap = 10
)

// SanitizeView returns v with every peer's report made plausible against
// what this terminal observes: delivery rates and capabilities at most
// PlausibleRateFactor × the median rate of the group (self and peers, so one
// liar cannot move the median) and never above MaxPlausibleRate; RTTs below
// MinPlausibleRTT treated as unknown, above MaxPlausibleRTT capped, a minimum
// RTT above the smoothed one lowered to it; flow counts at most
// MaxPlausibleFlows; link rates at most MaxPlausibleLinkRate; airtime
// shares within [0, 1] (an unreadable one unknown). The input is not
// modified.
func SanitizeView(v View) View {
	ceiling := rateCeiling(v)
	out := v
	out.Peers = make([]PeerView, len(v.Peers))
	out.LinkRate = clampRate(v.LinkRate, MaxPlausibleLinkRate)
	out.Air = plausibleAir(v.Air)
	for i, p := range v.Peers {
		p.DeliveryRate = clampRate(p.DeliveryRate, ceiling)
		p.Capability = clampRate(p.Capability, ceiling)
		p.SRTT, p.MinRTT = plausibleRTT(p.SRTT), plausibleRTT(p.MinRTT)
		if p.SRTT > 0 && p.MinRTT > p.SRTT {
			p.MinRTT = p.SRTT
		}
		p.ActiveFlows = min(max(p.ActiveFlows, 0), MaxPlausibleFlows)
		p.LinkRate = clampRate(p.LinkRate, MaxPlausibleLinkRate)
		p.Air = plausibleAir(p.Air)
		out.Peers[i] = p
	}
	return out
}

// plausibleAir is a in [0, 1] each, Foreign at most Busy; NaN is unknown (0).
func plausibleAir(a airtime.Shares) airtime.Shares {
	share := func(x float64) float64 {
		if math.IsNaN(x) {
			return 0
		}
		return min(max(x, 0), 1)
	}
	busy := share(a.Busy)
	return airtime.Shares{Busy: busy, Own: share(a.Own), Foreign: min(share(a.Foreign), busy)}
}

// rateCeiling is the highest delivery rate a peer may plausibly report.
func rateCeiling(v View) float64 {
	rates := []float64{ownRate(v)}
	for _, p := range v.Peers {
		if r := p.DeliveryRate; r > 0 && !math.IsNaN(r) {
			rates = append(rates, math.Min(r, MaxPlausibleRate))
		}
	}
	sort.Float64s(rates)
	// The lower median: with self and one liar it is self's rate, so a single
	// report can never lift it above the largest honest rate.
	median := rates[(len(rates)-1)/2]
	if median <= 0 {
		return MaxPlausibleRate
	}
	return math.Min(median*PlausibleRateFactor, MaxPlausibleRate)
}

// ownRate is this terminal's aggregate delivery rate over its flows.
func ownRate(v View) float64 {
	var r float64
	for _, f := range v.Flows {
		if f.DeliveryRate > 0 && !math.IsNaN(f.DeliveryRate) {
			r += f.DeliveryRate
		}
	}
	return r
}

func clampRate(r, ceiling float64) float64 {
	if math.IsNaN(r) || r < 0 {
		return 0
	}
	return math.Min(r, ceiling)
}

func plausibleRTT(d time.Duration) time.Duration {
	switch {
	case d < MinPlausibleRTT:
		return 0
	case d > MaxPlausibleRTT:
		return MaxPlausibleRTT
	}
	return d
}

// HiFloor is implemented by a policy whose own rule goes below MinHi
// (hayakawa2016 sets cwnd 1, as papers/001 does); ClampDecision then uses
// its floor instead.
type HiFloor interface{ MinHi() uint32 }

// MinHiOf returns the smallest upper bound p may apply: MinHi unless p says
// otherwise (HiFloor), never below 1.
func MinHiOf(p Policy) uint32 {
	if f, ok := p.(HiFloor); ok {
		return max(f.MinHi(), 1)
	}
	return MinHi
}

// ClampDecision keeps a decision's bounds in the sane range, whatever the
// policy computed from whatever peers said: hi at least minHi (MinHiOf the
// policy; 0 stays "no upper bound"), lo never above hi and at most
// LoBDPFactor × this terminal's own BDP in segments (at least MinLoCap).
//
// The BDP is what its flows deliver now at today's RTT, or, where more, what
// they carried recently (View.PeakRate) at today's RTT, reached by doublings:
// at most LoBDPFactor × the largest congestion window now, one step per
// decision. A terminal its policy has cut, or whose flow stalls, delivers
// little now, and a cap on that alone kept coop's competitive floor (the
// rate before the cut) from getting through — under rate adaptation beside
// CUBIC hosts (lab, testbed2012, papers/000's grid, 2026-11-27) it cut
// 53–58 % of the floors, to a median of 0.13–0.22 of what they asked (678
// segments at a 7.4 s RTT applied as 10), and the released window crept up
// one multi-second round trip at a time. Allowed at once, the floor was a
// burst of 670 segments into the station's queue, more than the lab's
// emulator read in time on 2 cores (invalid runs). The input is not
// modified.
func ClampDecision(d Decision, v View, minHi uint32) Decision {
	if !d.Active {
		return d
	}
	loCap := max(ownBDPSegments(v.Flows, 0)*LoBDPFactor+1, MinLoCap)
	if v.PeakRate > 0 {
		ramp := min(ownCwnd(v)*LoBDPFactor+1, ownBDPSegments(v.Flows, v.PeakRate)*LoBDPFactor+1)
		loCap = max(loCap, ramp)
	}
	out := d
	out.Default = clampBounds(d.Default, loCap, minHi)
	if d.PerDst != nil {
		out.PerDst = make(map[netip.Addr]Bounds, len(d.PerDst))
		for dst, b := range d.PerDst {
			out.PerDst[dst] = clampBounds(b, loCap, minHi)
		}
	}
	return out
}

func clampBounds(b Bounds, loCap, minHi uint32) Bounds {
	if b.Hi != 0 && b.Hi < minHi {
		b.Hi = minHi
	}
	b.Lo = min(b.Lo, loCap)
	if b.Hi != 0 {
		b.Lo = min(b.Lo, b.Hi)
	}
	return b
}

// RatePeakHalfLife is how fast RatePeak forgets: a minute, the span of an
// elasticity test, its verdict and an off period (30 s).
const RatePeakHalfLife = time.Minute

// RatePeak keeps View.PeakRate: the largest delivery rate of this terminal's
// flows, each taken at most at what its window carries at its RTT (the AP
// hands ACKs back in bursts: an evaluation's delivery can be three times
// that), decaying by half every RatePeakHalfLife. The zero value is ready.
// Not safe for concurrent use.
type RatePeak struct {
	rate float64
	at   time.Time
}

// Observe takes the flows of the view at now and returns the peak.
func (p *RatePeak) Observe(now time.Time, flows []FlowView) float64 {
	switch {
	case p.at.IsZero():
		p.at = now
	case now.After(p.at):
		p.rate *= math.Exp2(-now.Sub(p.at).Seconds() / RatePeakHalfLife.Seconds())
		p.at = now
	}
	for _, f := range flows {
		r := f.DeliveryRate
		if f.Cwnd > 0 && f.MSS > 0 && f.SRTT > 0 {
			r = math.Min(r, float64(f.Cwnd)*float64(f.MSS)/f.SRTT.Seconds())
		}
		if r > p.rate && !math.IsInf(r, 0) {
			p.rate = r
		}
	}
	return p.rate
}

// ownCwnd is the largest congestion window of this terminal's flows,
// segments.
func ownCwnd(v View) uint32 {
	var most uint32
	for _, f := range v.Flows {
		most = max(most, f.Cwnd)
	}
	return min(most, math.MaxUint32/4)
}

// ownBDPSegments is this terminal's largest window in flight over its
// flows, in segments: delivery rate, raised to atLeast (B/s; 0 = as
// measured), × RTT (the smoothed one, or the minimum when larger) / MSS.
func ownBDPSegments(flows []FlowView, atLeast float64) uint32 {
	var best float64
	for _, f := range flows {
		rtt := max(f.MinRTT, f.SRTT)
		mss := float64(f.MSS)
		rate := math.Max(f.DeliveryRate, atLeast)
		if mss <= 0 || rtt <= 0 || !(rate > 0) {
			continue
		}
		best = math.Max(best, rate*rtt.Seconds()/mss)
	}
	return uint32(math.Min(math.Ceil(best), math.MaxUint32/4))
}

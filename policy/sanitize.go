package policy

import (
	"math"
	"net/netip"
	"sort"
	"time"
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
// MaxPlausibleFlows; link rates at most MaxPlausibleLinkRate. The input is
// not modified.
func SanitizeView(v View) View {
	ceiling := rateCeiling(v)
	out := v
	out.Peers = make([]PeerView, len(v.Peers))
	out.LinkRate = clampRate(v.LinkRate, MaxPlausibleLinkRate)
	for i, p := range v.Peers {
		p.DeliveryRate = clampRate(p.DeliveryRate, ceiling)
		p.Capability = clampRate(p.Capability, ceiling)
		p.SRTT, p.MinRTT = plausibleRTT(p.SRTT), plausibleRTT(p.MinRTT)
		if p.SRTT > 0 && p.MinRTT > p.SRTT {
			p.MinRTT = p.SRTT
		}
		p.ActiveFlows = min(max(p.ActiveFlows, 0), MaxPlausibleFlows)
		p.LinkRate = clampRate(p.LinkRate, MaxPlausibleLinkRate)
		out.Peers[i] = p
	}
	return out
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
// policy; 0 stays "no upper bound"), lo at most LoBDPFactor × this terminal's own BDP in
// segments (at least MinLoCap) and never above hi. The input is not
// modified.
func ClampDecision(d Decision, v View, minHi uint32) Decision {
	if !d.Active {
		return d
	}
	loCap := max(ownBDPSegments(v)*LoBDPFactor+1, MinLoCap)
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

// ownBDPSegments is this terminal's largest window in flight over its
// flows, in segments: delivery rate × RTT (the smoothed one, or the minimum
// when larger) / MSS.
func ownBDPSegments(v View) uint32 {
	var best float64
	for _, f := range v.Flows {
		rtt := max(f.MinRTT, f.SRTT)
		mss := float64(f.MSS)
		if mss <= 0 || rtt <= 0 || !(f.DeliveryRate > 0) {
			continue
		}
		best = math.Max(best, f.DeliveryRate*rtt.Seconds()/mss)
	}
	return uint32(math.Min(math.Ceil(best), math.MaxUint32/4))
}

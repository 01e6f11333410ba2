package dcf

import (
	"fmt"
	"math/rand/v2"

	"github.com/coopcc/coopcc/emu/des"
	"github.com/coopcc/coopcc/emu/phy"
	"github.com/coopcc/coopcc/emu/ratectl"
)

// SaturationResult is the outcome of a saturation run in virtual time.
type SaturationResult struct {
	N            int
	Throughput   float64 // MSDU bits per second delivered to the AP
	Frames       uint64  // frames delivered in the measured interval
	Attempts     uint64
	Collisions   uint64
	CollisionP   float64 // collisions / attempts (Bianchi's p)
	Jain         float64 // fairness of per-station delivered frames
	Events       uint64
	MeasuredSecs float64
	MeanRate     float64 // mean PHY rate of the stations' delivered frames (Mbps), whole run
}

// SaturationConfig is a saturation experiment: N always-backlogged stations
// sending MSDU-byte packets to an idle AP.
type SaturationConfig struct {
	PHY             phy.Preset
	N, MSDU         int
	Warmup, Seconds float64 // virtual seconds
	RetryLimit      int     // 0 = preset
	Seed            uint64
	RateControl     string              // stations' controller ("" = constant rate)
	PER             map[float64]float64 // every station's per-rate frame error rate (nil = none)
}

// RunSaturation simulates n always-backlogged stations sending msdu-byte
// packets to an idle AP for warmup+seconds of virtual time and measures the
// interval after the warm-up. retryLimit 0 keeps the preset's limit.
func RunSaturation(p phy.Preset, n, msdu int, warmup, seconds float64, retryLimit int, seed uint64) (SaturationResult, error) {
	return Saturate(SaturationConfig{PHY: p, N: n, MSDU: msdu, Warmup: warmup, Seconds: seconds, RetryLimit: retryLimit, Seed: seed})
}

// Saturate runs a saturation experiment in virtual time and measures the
// interval after the warm-up. With no rate control and no PER it is
// exactly RunSaturation's model (same random draws).
func Saturate(c SaturationConfig) (SaturationResult, error) {
	p, n, msdu, warmup, seconds, retryLimit, seed := c.PHY, c.N, c.MSDU, c.Warmup, c.Seconds, c.RetryLimit, c.Seed
	if n < 1 || msdu < 1 || seconds <= 0 {
		return SaturationResult{}, fmt.Errorf("saturation: need n, msdu >= 1 and seconds > 0")
	}
	sim := des.New()
	m := NewMedium(sim, p, rand.New(rand.NewPCG(seed, uint64(n))))
	acc := DefaultAccess(p)
	if retryLimit > 0 {
		acc.RetryLimit = retryLimit
	}
	ap := &Node{Name: "ap", IsAP: true, Associated: true, Access: acc, Q: NewFIFO(1)}
	m.AddNode(ap)
	stas := make([]*Node, n)
	for i := range stas {
		stas[i] = &Node{Name: fmt.Sprintf("sta%d", i+1), Associated: true, Access: acc, Q: &Saturated{MSDU: msdu, To: ap.ID}, PER: c.PER}
		if c.RateControl != "" {
			ctl, err := NewController(c.RateControl, p, acc, 0, seed^uint64(i+1)<<32)
			if err != nil {
				return SaturationResult{}, err
			}
			stas[i].Ctl = func(int) ratectl.Controller { return ctl }
		}
		m.AddNode(stas[i])
	}
	perSta := make([]uint64, len(m.Nodes))
	measuring := false
	var frames, bits uint64
	m.Deliver = func(from *Node, f *Frame, to *Node) {
		if measuring {
			frames++
			bits += uint64(8 * f.MSDU)
			perSta[from.ID]++
		}
	}
	w := des.Time(warmup * float64(des.Second))
	sim.RunUntil(w)
	measuring = true
	var att0, col0 uint64
	for _, s := range stas {
		att0 += s.Stats.Attempts
		col0 += s.Stats.Collisions
	}
	end := w + des.Time(seconds*float64(des.Second))
	sim.RunUntil(end)
	var att, col uint64
	for _, s := range stas {
		att += s.Stats.Attempts
		col += s.Stats.Collisions
	}
	att -= att0
	col -= col0
	var delivered, rateSum float64
	for _, s := range stas {
		for rate, rs := range s.Stats.ByRate {
			delivered += float64(rs.Frames)
			rateSum += rate * float64(rs.Frames)
		}
	}
	r := SaturationResult{N: n, Throughput: float64(bits) / seconds, Frames: frames, Attempts: att, Collisions: col, Events: sim.Events(), MeasuredSecs: seconds}
	if delivered > 0 {
		r.MeanRate = rateSum / delivered
	}
	if att > 0 {
		r.CollisionP = float64(col) / float64(att)
	}
	var sum, sq float64
	for _, s := range stas {
		x := float64(perSta[s.ID])
		sum += x
		sq += x * x
	}
	if sq > 0 {
		r.Jain = sum * sum / (float64(n) * sq)
	}
	return r, nil
}

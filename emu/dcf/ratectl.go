package dcf

import (
	"fmt"

	"github.com/coopcc/coopcc/emu/des"
	"github.com/coopcc/coopcc/emu/phy"
	"github.com/coopcc/coopcc/emu/ratectl"
)

// MinstrelFrameBytes is the MSDU size of Minstrel's reference frame for
// its per-rate attempt time (Linux minstrel uses 1200-byte frames).
const MinstrelFrameBytes = 1200

// NewController builds a rate controller of the given kind ("" =
// constant) for a link of a node with access parameters acc. The usable
// rates are the preset's up to maxRate (0 = all); constant control sends at
// maxRate (0 = the preset's data rate).
func NewController(kind string, p phy.Preset, acc Access, maxRate float64, seed uint64) (ratectl.Controller, error) {
	var rates []float64
	for _, r := range p.Rates {
		if maxRate <= 0 || r <= maxRate {
			rates = append(rates, r)
		}
	}
	if len(rates) == 0 {
		return nil, fmt.Errorf("rate control: no %s rate at or below %v Mbps", p.Name, maxRate)
	}
	c, err := ratectl.New(kind, ratectl.Params{
		Rates: rates, Start: maxRate, RetryLimit: acc.RetryLimit,
		AttemptTime: func(r float64) des.Time {
			return p.AIFS(acc.AIFSN) + p.SuccessTime(p.DataTime(r, p.MPDUBytes(MinstrelFrameBytes)))
		},
		Slot: p.Slot, CWMin: acc.CWMin, CWMax: acc.CWMax, Seed: seed,
	})
	if err != nil {
		return nil, fmt.Errorf("rate control: %w", err)
	}
	return c, nil
}

// PerReceiver returns a Node.Ctl that keeps one controller per receiver
// (what a driver's per-peer rate state is), built on first use by mk.
// Building cannot fail once mk has succeeded for one receiver, so errors
// are found by calling mk once at set-up.
func PerReceiver(mk func(to int) ratectl.Controller) func(to int) ratectl.Controller {
	ctls := map[int]ratectl.Controller{}
	return func(to int) ratectl.Controller {
		c, ok := ctls[to]
		if !ok {
			c = mk(to)
			ctls[to] = c
		}
		return c
	}
}

// MeanRate is the mean PHY rate of the delivered frames in s.ByRate (0 when none).
func (s Stats) MeanRate() float64 {
	sum, n := s.RateTotals()
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// RateTotals sums the delivered frames in s.ByRate: Σ rate·frames (Mbit/s ·
// frames) and Σ frames.
func (s Stats) RateTotals() (sum float64, frames uint64) {
	for r, rs := range s.ByRate {
		sum += r * float64(rs.Frames)
		frames += rs.Frames
	}
	return sum, frames
}

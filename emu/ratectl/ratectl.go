// Package ratectl holds the emulator's PHY rate controllers: Constant (one
// fixed rate), ARF, AARF and a Minstrel-like sampling controller with a
// multi-rate retry chain. Each is a small, deterministic state machine driven
// by the medium (package dcf): before every transmission attempt the medium
// asks for the attempt's rate, afterwards it reports whether the attempt was
// acknowledged. A collision and a frame error look the same to a
// controller (no ACK), as they do to a real sender: that is the point of
// modelling them (rate adaptation that reads collisions as a bad channel).
//
// Controllers know nothing of the medium; they see rates (Mbps) from the PHY
// preset's rate set, a clock, and outcomes. Randomness (Minstrel's sampling
// order) comes from a seeded generator of the controller's own.
package ratectl

import (
	"fmt"
	"sort"
	"strings"

	"github.com/coopcc/coopcc/emu/des"
)

// Controller chooses the PHY rate of each transmission attempt of one link
// (a station's link to the AP, or the AP's link to one station).
type Controller interface {
	// Rate is the rate (Mbps) of attempt number attempt (0 = the first
	// attempt of a new frame) of the frame at the head of the queue.
	Rate(now des.Time, attempt int) float64
	// Retry reports whether attempt number attempt (counted from 0) may be
	// made; false drops the frame. Controllers without a retry chain of
	// their own apply the medium's retry limit.
	Retry(attempt int) bool
	// Report is the outcome of one attempt at rate: ok when acknowledged.
	Report(now des.Time, rate float64, ok bool)
}

// Kinds of controller, as named in configs.
const (
	KindConstant = "constant"
	KindARF      = "arf"
	KindAARF     = "aarf"
	KindMinstrel = "minstrel"
)

// Kinds lists the controller names New accepts.
func Kinds() []string { return []string{KindConstant, KindARF, KindAARF, KindMinstrel} }

// CheckKind returns an error naming the valid kinds when kind is not one
// ("" means constant).
func CheckKind(kind string) error {
	if kind == "" {
		return nil
	}
	for _, k := range Kinds() {
		if k == kind {
			return nil
		}
	}
	return fmt.Errorf("unknown rate control %q: use one of %s", kind, strings.Join(Kinds(), ", "))
}

// Params describe the link a controller runs on.
type Params struct {
	Rates      []float64 // the usable rates, ascending (Mbps)
	Start      float64   // Constant's rate; the others start at the highest rate
	RetryLimit int       // attempts per frame (the medium's limit)
	// AttemptTime is the medium time of one successful attempt at a rate
	// (DIFS + data + SIFS + ACK of a reference frame), for Minstrel's
	// throughput estimate and retry-chain budget.
	AttemptTime func(rate float64) des.Time
	Slot        des.Time // slot time, for Minstrel's retry-chain budget
	CWMin       int      // contention window bounds, likewise
	CWMax       int
	Seed        uint64 // Minstrel's sampling order
}

// New builds a controller of the given kind ("" = constant).
func New(kind string, p Params) (Controller, error) {
	if err := CheckKind(kind); err != nil {
		return nil, err
	}
	if len(p.Rates) == 0 || !sort.Float64sAreSorted(p.Rates) {
		return nil, fmt.Errorf("rate control %s: need an ascending, non-empty rate set", kind)
	}
	if p.RetryLimit < 1 {
		return nil, fmt.Errorf("rate control %s: retry limit must be >= 1", kind)
	}
	switch kind {
	case KindARF:
		return NewARF(p.Rates, p.RetryLimit), nil
	case KindAARF:
		return NewAARF(p.Rates, p.RetryLimit), nil
	case KindMinstrel:
		if p.AttemptTime == nil || p.Slot <= 0 || p.CWMin < 1 || p.CWMax < p.CWMin {
			return nil, fmt.Errorf("rate control minstrel: need attempt times, slot and CW bounds")
		}
		return NewMinstrel(p), nil
	}
	r := p.Start
	if r <= 0 {
		r = p.Rates[len(p.Rates)-1]
	}
	return Constant{Mbps: r, Limit: p.RetryLimit}, nil
}

// Constant sends every attempt at one rate (the emulator's behaviour without
// rate control).
type Constant struct {
	Mbps  float64
	Limit int // attempts per frame
}

// Rate implements Controller.
func (c Constant) Rate(des.Time, int) float64 { return c.Mbps }

// Retry implements Controller.
func (c Constant) Retry(attempt int) bool { return attempt < c.Limit }

// Report implements Controller.
func (c Constant) Report(des.Time, float64, bool) {}

// index returns the position of rate in rates (the nearest one at or below
// it; 0 when below all).
func index(rates []float64, rate float64) int {
	i := sort.SearchFloat64s(rates, rate)
	if i < len(rates) && rates[i] == rate {
		return i
	}
	return max(0, i-1)
}

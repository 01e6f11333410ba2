package ratectl

import "github.com/coopcc/coopcc/emu/des"

// ARF's and AARF's constants, and where each comes from.
const (
	// ARFSuccessThreshold: move up one rate after 10 consecutive successful
	// attempts. Kamerman & Monteban, "WaveLAN-II: a high-performance
	// wireless LAN for the unlicensed band", Bell Labs Technical Journal
	// 1997 (ARF); Lacage, Manshaei & Turletti, "IEEE 802.11 rate adaptation:
	// a practical approach", MSWiM 2004, §3.1; ns-3 ArfWifiManager
	// SuccessThreshold = 10.
	ARFSuccessThreshold = 10
	// ARFTimerThreshold: or move up after this many attempts since the last
	// rate change. ARF's timer is a time-out in the original; ns-3's
	// ArfWifiManager counts attempts instead (TimerThreshold = 15), which
	// keeps the controller independent of the traffic's timing. We use ns-3's.
	ARFTimerThreshold = 15
	// ARFFailureThreshold: move down one rate after 2 consecutive failed
	// attempts (Kamerman & Monteban 1997; Lacage et al. 2004 §3.1; ns-3's
	// "(retry-1) % 2 == 1" fallback).
	ARFFailureThreshold = 2
	// AARFMaxSuccessThreshold: AARF doubles the success threshold when the
	// probe at a higher rate fails, "with a maximum bound set to 50"
	// (Lacage et al. 2004 §4.1). ns-3's AarfWifiManager defaults to 60; we
	// follow the paper.
	AARFMaxSuccessThreshold = 50
)

// ARF is Auto Rate Fallback, and with Adaptive set, AARF.
//
// Per attempt: a success counts towards the success threshold and the timer;
// at the threshold (or the timer) the rate goes one step up and the next
// attempt is a probe. A failed probe falls back at once; otherwise
// ARFFailureThreshold consecutive failures step down. AARF additionally
// doubles the success threshold (and the timer) after a failed probe, up to
// AARFMaxSuccessThreshold, and resets both after a normal fallback.
//
// [interpretation] AARF's paper does not say what happens to ARF's timer; a
// timer that stayed at 15 while the success threshold grew to 50 would make
// the doubling moot, so the timer scales with the success threshold (ns-3
// also doubles it, TimerK = 2).
type ARF struct {
	rates    []float64
	limit    int
	adaptive bool

	idx      int
	success  int // consecutive successes
	failures int // consecutive failures
	timer    int // attempts since the last rate change
	recovery bool
	succThr  int
	timerThr int
}

// NewARF returns an ARF controller starting at the highest rate.
func NewARF(rates []float64, retryLimit int) *ARF {
	return &ARF{rates: rates, limit: retryLimit, idx: len(rates) - 1, succThr: ARFSuccessThreshold, timerThr: ARFTimerThreshold}
}

// NewAARF returns an AARF controller starting at the highest rate.
func NewAARF(rates []float64, retryLimit int) *ARF {
	a := NewARF(rates, retryLimit)
	a.adaptive = true
	return a
}

// Rate implements Controller: every attempt goes at the current rate.
func (a *ARF) Rate(des.Time, int) float64 { return a.rates[a.idx] }

// Retry implements Controller: the medium's retry limit.
func (a *ARF) Retry(attempt int) bool { return attempt < a.limit }

// SuccessThreshold is the current number of successes needed to step up.
func (a *ARF) SuccessThreshold() int { return a.succThr }

// Report implements Controller.
func (a *ARF) Report(_ des.Time, _ float64, ok bool) {
	a.timer++
	if ok {
		a.success++
		a.failures = 0
		a.recovery = false
		if (a.success >= a.succThr || a.timer >= a.timerThr) && a.idx < len(a.rates)-1 {
			a.idx++
			a.success, a.timer = 0, 0
			a.recovery = true
		}
		return
	}
	a.success = 0
	a.failures++
	if a.recovery {
		// The probe at the new rate failed: back at once.
		a.recovery = false
		a.failures, a.timer = 0, 0
		a.down()
		if a.adaptive {
			a.succThr = min(2*a.succThr, AARFMaxSuccessThreshold)
			a.timerThr = ARFTimerThreshold * a.succThr / ARFSuccessThreshold
		}
		return
	}
	if a.failures >= ARFFailureThreshold {
		a.failures, a.timer = 0, 0
		a.down()
		if a.adaptive {
			a.succThr, a.timerThr = ARFSuccessThreshold, ARFTimerThreshold
		}
	}
}

func (a *ARF) down() {
	if a.idx > 0 {
		a.idx--
	}
}

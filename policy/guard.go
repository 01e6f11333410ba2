package policy

import (
	"fmt"
	"time"
)

// Switching off when control does not help (papers/004, future work: "stop
// the middleware and switch back to the standard algorithm", so that the
// middleware is never worse than the default) has its home in this package,
// in two forms that answer different questions:
//
//   - coop's elasticity test (coop_compete.go), inside the policy: does the
//     queue follow the group's windows? It decides within seconds from the
//     delay signal and hands the medium back to CUBIC beside hosts that keep
//     the queue full.
//   - the Guard (this file), around any policy and opt-in (agent config
//     guard.enabled): does control cost throughput? It compares the measured
//     delivery rate with control on and in short probes with control off,
//     over tens of seconds; the agent applies its verdict to whatever policy
//     runs (the papers' rules have no switch-off of their own).
//
//
// [interpretation] "Help" is measured as the mean aggregate delivery rate over
// a window: by default the group's (this terminal's managed flows plus the
// rates its live peers report), or only this terminal's (scope "self"). The
// guard alternates a long window with control on and a short probe window
// with control off; when the on-window's rate is more than MaxCost below the
// probe's, it disables control for Backoff, then tries again. A window in
// which the number of active flows or of terminals changes, or with nothing
// to measure, is discarded: the comparison is only made between like
// situations. Guard is a pure state machine driven by Observe.

// GuardParams are the guard's settings (see GuardConfig).
type GuardParams struct {
	OnWindow, OffWindow, Settle, Backoff time.Duration
	MaxCost                              float64
}

// GuardSample is what one monitor tick tells the guard.
type GuardSample struct {
	Rate    float64 // aggregate delivery rate, B/s
	Flows   int     // this terminal's active managed flows
	N       int     // active terminals
	Control bool    // the policy wants bounds now
}

// Guard states.
const (
	GuardIdle     = "idle"     // nothing to compare (no flows or the policy is not bounding)
	GuardOn       = "on"       // control on, measuring
	GuardProbe    = "probe"    // control off for a short probe
	GuardDisabled = "disabled" // control off: it cost more than MaxCost
)

// GuardStatus is the guard's visible state.
type GuardStatus struct {
	State     string    `json:"state"`
	ControlOn bool      `json:"control_on"`
	RateOn    float64   `json:"rate_on_Bps"`  // last on-window mean
	RateOff   float64   `json:"rate_off_Bps"` // last probe mean
	Cost      float64   `json:"cost"`         // 1 - RateOn/RateOff of the last comparison
	Until     time.Time `json:"until,omitzero"`
	Reason    string    `json:"reason"`
	Disables  uint64    `json:"disables"` // how often control was disabled
	Probes    uint64    `json:"probes"`   // completed comparisons
}

// Guard is the state machine. Not safe for concurrent use.
type Guard struct {
	p     GuardParams
	st    GuardStatus
	start time.Time // current window start
	flows int       // situation at window start
	n     int
	sum   float64
	cnt   int
}

// NewGuard returns a guard in the idle state.
func NewGuard(p GuardParams) *Guard {
	g := &Guard{p: p}
	g.st.State = GuardIdle
	g.st.ControlOn = true
	return g
}

// Params returns the guard's settings.
func (g *Guard) Params() GuardParams { return g.p }

// Status returns the current state.
func (g *Guard) Status() GuardStatus { return g.st }

func (g *Guard) begin(now time.Time, state string, s GuardSample) {
	g.st.State, g.start, g.flows, g.n, g.sum, g.cnt = state, now, s.Flows, s.N, 0, 0
	g.st.ControlOn = state != GuardProbe && state != GuardDisabled
}

// Observe feeds one sample and returns whether control may be on now.
func (g *Guard) Observe(now time.Time, s GuardSample) GuardStatus {
	switch g.st.State {
	case GuardDisabled:
		if now.Before(g.st.Until) {
			return g.st
		}
		g.st.Until = time.Time{}
		g.begin(now, GuardIdle, s)
		g.st.Reason = "backoff over, control allowed again"
		fallthrough
	case GuardIdle:
		if s.Flows == 0 || !s.Control {
			g.st.State, g.st.ControlOn = GuardIdle, true
			if g.st.Reason == "" {
				g.st.Reason = "nothing to compare"
			}
			return g.st
		}
		g.begin(now, GuardOn, s)
		g.st.Reason = "measuring with control on"
		return g.st
	}
	// GuardOn or GuardProbe: a changed situation discards the window.
	if s.Flows == 0 || (g.st.State == GuardOn && !s.Control) {
		g.begin(now, GuardIdle, s)
		g.st.Reason = "nothing to compare"
		return g.st
	}
	if s.Flows != g.flows || s.N != g.n {
		g.begin(now, GuardOn, s)
		g.st.Reason = "situation changed, window restarted"
		return g.st
	}
	el := now.Sub(g.start)
	if el >= g.p.Settle {
		g.sum += s.Rate
		g.cnt++
	}
	switch g.st.State {
	case GuardOn:
		if el >= g.p.OnWindow && g.cnt > 0 {
			g.st.RateOn = g.sum / float64(g.cnt)
			g.begin(now, GuardProbe, s)
			g.st.Reason = "probing with control off"
		}
	case GuardProbe:
		if el >= g.p.OffWindow && g.cnt > 0 {
			g.st.RateOff = g.sum / float64(g.cnt)
			g.st.Probes++
			g.st.Cost = 0
			if g.st.RateOff > 0 {
				g.st.Cost = 1 - g.st.RateOn/g.st.RateOff
			}
			if g.st.Cost > g.p.MaxCost {
				g.begin(now, GuardDisabled, s)
				g.st.Until = now.Add(g.p.Backoff)
				g.st.Disables++
				g.st.Reason = fmt.Sprintf("bounds cost %.1f%% > %.1f%% of throughput: control off until %s",
					100*g.st.Cost, 100*g.p.MaxCost, g.st.Until.UTC().Format(time.RFC3339))
			} else {
				g.begin(now, GuardOn, s)
				g.st.Reason = fmt.Sprintf("bounds cost %.1f%% ≤ %.1f%%: control stays on", 100*g.st.Cost, 100*g.p.MaxCost)
			}
		}
	}
	return g.st
}

package policy

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
)

// This file holds the pure parts of the calibration of papers/003 §6.2
// (Matsuno et al., in Japanese): sweep the upper cwnd bound from 2× to 64× a
// base cwnd, with the lower bound at the multiplier minus one ("下限値は上限値の
// 倍率から 1 引いた倍率"), record the RTT at each setting, and find by a
// piecewise-linear fit the "Buffer limited" point where RTT stops rising in
// proportion to cwnd ("RTT 値が比例的に上昇する場合はキューが溢れておらず、RTT 値が
// 一定または微小の増減をしている場合にはキューが溢れている"). The paper found 8×,
// 8×, 10× and 14× for its four devices (Table 2). The sweep itself is run by
// `coopcc clamp` / the lab.

// Calibration sweep limits (papers/003 §6.2).
const (
	CalibrationMinMultiplier = 2
	CalibrationMaxMultiplier = 64
)

// CalibrationPlan returns the sweep: for k = 2, 3, …, 64, Hi = k·base and
// Lo = (k−1)·base. The paper states the range and the lower-bound rule but
// not the step; the results it reports (10×, 14×) are not powers of two, so
// the step is 1× **[interpretation]**. base 0 gives nil. Values saturate at
// the largest uint32.
func CalibrationPlan(base uint32) []Bounds {
	if base == 0 {
		return nil
	}
	out := make([]Bounds, 0, CalibrationMaxMultiplier-CalibrationMinMultiplier+1)
	for k := uint64(CalibrationMinMultiplier); k <= CalibrationMaxMultiplier; k++ {
		out = append(out, Bounds{
			Lo: uint32(min((k-1)*uint64(base), math.MaxUint32)),
			Hi: uint32(min(k*uint64(base), math.MaxUint32)),
		})
	}
	return out
}

// Sample is one calibration measurement: the bound in force (segments, or a
// multiplier of the base — any consistent unit) and the RTT observed with it.
type Sample struct {
	Bound float64
	RTT   time.Duration
}

// Fit is the two-segment least-squares fit behind a knee: samples with
// Bound ≤ Knee follow RTT ≈ Slope1·bound + Intercept1 (RTT in seconds), those
// with Bound ≥ Knee follow Slope2/Intercept2. SSE is the total squared error
// (s²); Index is the position of the knee in the samples sorted by bound.
type Fit struct {
	Index              int
	Knee               float64
	Slope1, Intercept1 float64
	Slope2, Intercept2 float64
	SSE                float64
	Points             int
}

// ErrTooFewSamples is returned when a knee cannot be fitted.
var ErrTooFewSamples = errors.New("knee: need at least 3 samples with distinct bounds")

// Knee finds the breakpoint of a two-segment piecewise-linear fit of RTT
// against bound: for every candidate breakpoint (each distinct bound except
// the smallest and the largest) it fits one least-squares line to the samples
// up to and including the breakpoint and another to the samples from the
// breakpoint on, and returns the breakpoint with the smallest total squared
// error (ties: the smaller bound). That breakpoint is papers/003's "Buffer
// limited" point when RTT rises with the bound and then flattens.
// Samples need not be sorted; repeated bounds (several RTT readings per
// setting) are fine; NaN/Inf bounds and negative RTTs are rejected.
func Knee(samples []Sample) (float64, Fit, error) {
	s := make([]Sample, 0, len(samples))
	for _, x := range samples {
		if math.IsNaN(x.Bound) || math.IsInf(x.Bound, 0) {
			return 0, Fit{}, fmt.Errorf("knee: bound %v is not a finite number", x.Bound)
		}
		if x.RTT < 0 {
			return 0, Fit{}, fmt.Errorf("knee: negative RTT %v at bound %v", x.RTT, x.Bound)
		}
		s = append(s, x)
	}
	sort.SliceStable(s, func(a, b int) bool { return s[a].Bound < s[b].Bound })
	// Distinct bounds and the index range of each.
	type span struct{ lo, hi int } // [lo, hi)
	var spans []span
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j].Bound == s[i].Bound {
			j++
		}
		spans = append(spans, span{i, j})
		i = j
	}
	if len(spans) < 3 {
		return 0, Fit{}, ErrTooFewSamples
	}
	best := Fit{SSE: math.Inf(1), Points: len(s)}
	for k := 1; k < len(spans)-1; k++ {
		left := s[:spans[k].hi]
		right := s[spans[k].lo:]
		m1, b1, e1 := lineFit(left)
		m2, b2, e2 := lineFit(right)
		if e := e1 + e2; e < best.SSE {
			best = Fit{Index: spans[k].lo, Knee: s[spans[k].lo].Bound, Slope1: m1, Intercept1: b1, Slope2: m2, Intercept2: b2, SSE: e, Points: len(s)}
		}
	}
	return best.Knee, best, nil
}

// lineFit is ordinary least squares of RTT (s) on Bound: slope, intercept,
// sum of squared residuals. Centred sums keep it accurate for large bounds.
func lineFit(s []Sample) (slope, intercept, sse float64) {
	n := float64(len(s))
	var mx, my float64
	for _, p := range s {
		mx += p.Bound
		my += p.RTT.Seconds()
	}
	mx /= n
	my /= n
	var sxx, sxy float64
	for _, p := range s {
		dx := p.Bound - mx
		sxx += dx * dx
		sxy += dx * (p.RTT.Seconds() - my)
	}
	if sxx > 0 {
		slope = sxy / sxx
	}
	intercept = my - slope*mx
	for _, p := range s {
		r := p.RTT.Seconds() - (slope*p.Bound + intercept)
		sse += r * r
	}
	return slope, intercept, sse
}

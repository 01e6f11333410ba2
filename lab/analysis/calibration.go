package analysis

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/coopcc/coopcc/policy"
)

// CalibrationPoint is one terminal group at one bound multiplier of a
// calibration sweep (sweep.bound_multiplier, papers/003 §6.2), over the
// valid runs of that point.
type CalibrationPoint struct {
	// Variant is the sweep point without mode, n, delay, repetition and
	// multiplier ("" when nothing else was swept).
	Variant    string
	DelayMS    float64
	Group      string // the stations' group (StationGroup)
	Multiplier int
	Runs       int // valid runs
	// RTTms is the mean over the group's stations and runs of each
	// station's median SRTT; GoodputMbps the mean goodput per terminal.
	RTTms       float64
	GoodputMbps float64
}

// CalibrationKnee is the "Buffer limited" point papers/003 finds for one
// terminal group: the multiplier where the group's RTT stops rising with
// its bound, by the two-segment fit of policy.Knee over every station's
// median SRTT in every valid run (repeated multipliers are samples of the
// same point).
type CalibrationKnee struct {
	Variant    string
	DelayMS    float64
	Group      string
	Multiplier int        // the knee; 0 when Err says why there is none
	Fit        policy.Fit // the fit behind it (RTT in seconds)
	Samples    int
	Err        string
}

// Calibration groups the runs of calibration sweeps (those with a
// bound_multiplier parameter) by sweep point and terminal group, and finds
// each group's knee. Runs without the parameter and invalid runs are left
// out. Both results are sorted by variant, delay, group (and multiplier).
func Calibration(runs []RunSummary) ([]CalibrationPoint, []CalibrationKnee) {
	type gkey struct {
		variant string
		delay   float64
		group   string
	}
	type pkey struct {
		gkey
		k int
	}
	type acc struct {
		runs       map[string]bool
		rtt, goods []float64
	}
	points := map[pkey]*acc{}
	samples := map[gkey][]policy.Sample{}
	for _, r := range runs {
		k, err := strconv.Atoi(r.Params["bound_multiplier"])
		if err != nil || !r.Valid {
			continue
		}
		variant := withoutParams(Variant(r.Group), "bound_multiplier")
		for _, st := range r.Stations {
			if math.IsNaN(st.GoodputMbps) || st.RTT.Count == 0 {
				continue
			}
			g := gkey{variant, r.DelayMS, StationGroup(Station{Name: st.Station, Group: st.Group, Managed: st.Managed})}
			p := points[pkey{g, k}]
			if p == nil {
				p = &acc{runs: map[string]bool{}}
				points[pkey{g, k}] = p
			}
			p.runs[r.ID] = true
			p.rtt = append(p.rtt, st.RTT.P50)
			p.goods = append(p.goods, st.GoodputMbps)
			samples[g] = append(samples[g], policy.Sample{Bound: float64(k), RTT: time.Duration(st.RTT.P50 * float64(time.Millisecond))})
		}
	}
	var outP []CalibrationPoint
	for k, p := range points {
		outP = append(outP, CalibrationPoint{Variant: k.variant, DelayMS: k.delay, Group: k.group, Multiplier: k.k,
			Runs: len(p.runs), RTTms: StatOf(p.rtt).Mean, GoodputMbps: StatOf(p.goods).Mean})
	}
	slices.SortFunc(outP, func(a, b CalibrationPoint) int {
		return cmp.Or(cmp.Compare(a.Variant, b.Variant), cmp.Compare(a.DelayMS, b.DelayMS), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Multiplier, b.Multiplier))
	})
	var outK []CalibrationKnee
	for g, s := range samples {
		kn := CalibrationKnee{Variant: g.variant, DelayMS: g.delay, Group: g.group, Samples: len(s)}
		knee, fit, err := policy.Knee(s)
		if err != nil {
			kn.Err = err.Error()
		} else {
			kn.Multiplier, kn.Fit = int(knee), fit
		}
		outK = append(outK, kn)
	}
	slices.SortFunc(outK, func(a, b CalibrationKnee) int {
		return cmp.Or(cmp.Compare(a.Variant, b.Variant), cmp.Compare(a.DelayMS, b.DelayMS), cmp.Compare(a.Group, b.Group))
	})
	return outP, outK
}

package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/coopcc/coopcc/policy/fairness"
)

// Percentile returns the p-th percentile (0..100) of xs by linear
// interpolation between the closest ranks (the "type 7" estimator, numpy's
// default): rank r = p/100·(n−1), value = x[⌊r⌋] + (r−⌊r⌋)(x[⌊r⌋+1]−x[⌊r⌋])
// on the sorted values. NaN for an empty slice. xs is not modified.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return percentileSorted(s, p)
}

func percentileSorted(s []float64, p float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	p = math.Max(0, math.Min(100, p))
	r := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(r))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (r-float64(lo))*(s[lo+1]-s[lo])
}

// Percentiles are the RTT percentiles the report shows, in milliseconds.
// Count is the number of samples they were computed from (0 = none: all NaN).
type Percentiles struct {
	P50, P95, P99 float64
	Count         int
}

// PercentilesOf computes p50/p95/p99 of xs.
func PercentilesOf(xs []float64) Percentiles {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return Percentiles{P50: percentileSorted(s, 50), P95: percentileSorted(s, 95), P99: percentileSorted(s, 99), Count: len(s)}
}

// Jain returns Jain's fairness index (Σx)² / (n·Σx²) of the throughputs xs
// (policy/fairness.Jain): 1 when all are equal, 1/n when one flow takes
// everything, 1 when all are zero. NaN for no flows (nothing to judge) or
// for an invalid value (negative, NaN).
func Jain(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	j, err := fairness.Jain(xs)
	if err != nil {
		return math.NaN()
	}
	return j
}

// WeightedFairness is the capability-weighted fairness index of papers/003
// (policy/fairness.Weighted):
//
//	f = (Σ xᵢ/Maxᵢ)² / (n · Σ (xᵢ/Maxᵢ)²)
//
// where Maxᵢ is terminal i's throughput when it is alone on the network. It
// is Jain's index of the normalized throughputs xᵢ/Maxᵢ: 1 when every terminal
// gets the same fraction of what it could get alone. Every Maxᵢ must be > 0;
// on error the index is NaN.
func WeightedFairness(x, max []float64) (float64, error) {
	f, err := fairness.Weighted(x, max)
	if err != nil {
		return math.NaN(), fmt.Errorf("weighted fairness: %w", err)
	}
	return f, nil
}

// Stat summarizes one metric over the repetitions of a run group. NaN
// inputs (metric not available in that run) are skipped; N counts the rest.
type Stat struct {
	Mean, Min, Max float64
	N              int
}

// StatOf aggregates xs (NaNs skipped). All fields are NaN (N = 0) when
// nothing is left.
func StatOf(xs []float64) Stat {
	st := Stat{Mean: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	var sum float64
	for _, x := range xs {
		if math.IsNaN(x) {
			continue
		}
		if st.N == 0 || x < st.Min {
			st.Min = x
		}
		if st.N == 0 || x > st.Max {
			st.Max = x
		}
		sum += x
		st.N++
	}
	if st.N > 0 {
		st.Mean = sum / float64(st.N)
	}
	return st
}

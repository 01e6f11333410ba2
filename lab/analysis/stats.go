package analysis

import (
	"fmt"
	"math"
	"sort"
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

// Jain returns Jain's fairness index (Σx)² / (n·Σx²) of the throughputs xs:
// 1 when all are equal, 1/n when one flow takes everything. NaN for no
// flows; 1 when all throughputs are zero (nobody is favoured).
func Jain(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var sum, sq float64
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	if sq == 0 {
		return 1
	}
	return sum * sum / (float64(len(xs)) * sq)
}

// WeightedFairness is the capability-weighted fairness index of papers/003:
//
//	f = (Σ xᵢ/Maxᵢ)² / (n · Σ (xᵢ/Maxᵢ)²)
//
// where Maxᵢ is terminal i's throughput when it is alone on the network. It
// is Jain's index of the normalized throughputs xᵢ/Maxᵢ: 1 when every terminal
// gets the same fraction of what it could get alone. Every Maxᵢ must be > 0.
func WeightedFairness(x, max []float64) (float64, error) {
	if len(x) != len(max) {
		return math.NaN(), fmt.Errorf("weighted fairness: %d throughputs but %d maxima", len(x), len(max))
	}
	norm := make([]float64, len(x))
	for i := range x {
		if !(max[i] > 0) {
			return math.NaN(), fmt.Errorf("weighted fairness: terminal %d has no throughput-alone value (Max must be > 0, got %g)", i, max[i])
		}
		norm[i] = x[i] / max[i]
	}
	return Jain(norm), nil
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

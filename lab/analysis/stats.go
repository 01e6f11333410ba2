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
// inputs (metric not available in that run) are skipped; N counts the rest:
// the repetitions that stand behind the numbers.
type Stat struct {
	Mean, Min, Max float64
	// SD is the sample standard deviation (n−1 in the denominator) and CI95
	// the half-width of the 95 % confidence interval of the mean by
	// Student's t: t(0.975, N−1)·SD/√N. Both NaN when N < 2 (one
	// repetition says nothing about the spread).
	SD, CI95 float64
	N        int
}

// StatOf aggregates xs (NaNs skipped). All fields are NaN (N = 0) when
// nothing is left.
func StatOf(xs []float64) Stat {
	st := Stat{Mean: math.NaN(), Min: math.NaN(), Max: math.NaN(), SD: math.NaN(), CI95: math.NaN()}
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
	if st.N == 0 {
		return st
	}
	st.Mean = sum / float64(st.N)
	if st.N < 2 {
		return st
	}
	var ss float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			ss += (x - st.Mean) * (x - st.Mean)
		}
	}
	st.SD = math.Sqrt(ss / float64(st.N-1))
	st.CI95 = TQuantile975(st.N-1) * st.SD / math.Sqrt(float64(st.N))
	return st
}

// t975 holds Student's t quantile t(0.975, ν) for ν = 1..30.
var t975 = [...]float64{12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
	2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
	2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423}

// TQuantile975 is the 97.5th percentile of Student's t distribution with df
// degrees of freedom (the factor of a two-sided 95 % confidence interval):
// a table for df ≤ 30, above it the Cornish–Fisher expansion around the
// normal quantile 1.959964 (error below 10⁻⁴). NaN for df < 1.
func TQuantile975(df int) float64 {
	if df < 1 {
		return math.NaN()
	}
	if df <= len(t975) {
		return t975[df-1]
	}
	z, v := 1.959963985, float64(df)
	z3, z5, z7 := z*z*z, math.Pow(z, 5), math.Pow(z, 7)
	return z + (z3+z)/(4*v) + (5*z5+16*z3+3*z)/(96*v*v) + (3*z7+19*z5+17*z3-15*z)/(384*v*v*v)
}

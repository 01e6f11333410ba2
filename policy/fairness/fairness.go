// Package fairness computes throughput fairness indexes. It is pure (no I/O)
// and shared by the policy package's tests and the lab's analysis.
package fairness

import (
	"fmt"
	"math"
)

// Jain is Jain's fairness index (Chiu & Jain 1989; papers/000 expression 5,
// papers/001 expression 6):
//
//	f = (Σ xᵢ)² / (n · Σ xᵢ²)
//
// 1 means all equal, 1/n means one takes everything. An empty slice or all
// zeros gives 1 (nothing is shared unfairly). Negative, NaN or Inf values are
// an error.
func Jain(xs []float64) (float64, error) {
	var sum, sq float64
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return 0, fmt.Errorf("fairness: value %d is %v: want a finite number >= 0", i, x)
		}
		sum += x
		sq += x * x
	}
	if len(xs) == 0 || sq == 0 {
		return 1, nil
	}
	// Scale to avoid overflow of the squares for huge values.
	if math.IsInf(sq, 0) || math.IsInf(sum*sum, 0) {
		m := 0.0
		for _, x := range xs {
			m = max(m, x)
		}
		scaled := make([]float64, len(xs))
		for i, x := range xs {
			scaled[i] = x / m
		}
		return Jain(scaled)
	}
	return sum * sum / (float64(len(xs)) * sq), nil
}

// Weighted is papers/003 §5.2's capability-weighted index: Jain's index of
// xᵢ/Maxᵢ, where Maxᵢ is terminal i's throughput when alone,
//
//	f = (Σ xᵢ/Maxᵢ)² / (n · Σ (xᵢ/Maxᵢ)²).
//
// xs and maxes must have the same length and every Maxᵢ must be > 0.
func Weighted(xs, maxes []float64) (float64, error) {
	if len(xs) != len(maxes) {
		return 0, fmt.Errorf("fairness: %d throughputs but %d maxima: want one maximum per terminal", len(xs), len(maxes))
	}
	norm := make([]float64, len(xs))
	for i := range xs {
		m := maxes[i]
		if math.IsNaN(m) || math.IsInf(m, 0) || m <= 0 {
			return 0, fmt.Errorf("fairness: maximum %d is %v: want a finite throughput > 0 (the terminal alone)", i, m)
		}
		norm[i] = xs[i] / m
	}
	return Jain(norm)
}

package fairness

import (
	"math"
	"testing"
)

func TestJain(t *testing.T) {
	cases := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{1, 1, 1, 1}, 1},
		{[]float64{1, 0, 0, 0}, 0.25},
		{[]float64{3, 1}, 16.0 / 20},
		{nil, 1},
		{[]float64{0, 0}, 1},
		{[]float64{math.MaxFloat64, math.MaxFloat64}, 1},
		{[]float64{math.MaxFloat64, 0}, 0.5},
	}
	for _, c := range cases {
		got, err := Jain(c.xs)
		if err != nil || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Jain(%v) = %v, %v; want %v", c.xs, got, err, c.want)
		}
	}
	for _, bad := range [][]float64{{-1}, {math.NaN()}, {math.Inf(1)}} {
		if _, err := Jain(bad); err == nil {
			t.Errorf("Jain(%v) accepted", bad)
		}
	}
}

func TestWeighted(t *testing.T) {
	// Two terminals each at half of what they reach alone: perfectly fair by
	// papers/003's index although their throughputs differ 4:1.
	got, err := Weighted([]float64{200, 50}, []float64{400, 100})
	if err != nil || got != 1 {
		t.Fatalf("Weighted = %v, %v; want 1", got, err)
	}
	plain, _ := Jain([]float64{200, 50})
	if plain >= 1 {
		t.Fatalf("plain Jain %v should be < 1", plain)
	}
	if _, err := Weighted([]float64{1}, []float64{1, 2}); err == nil {
		t.Fatal("length mismatch accepted")
	}
	if _, err := Weighted([]float64{1}, []float64{0}); err == nil {
		t.Fatal("zero maximum accepted")
	}
}

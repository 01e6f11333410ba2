package analysis

import (
	"math"
	"testing"
)

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"empty", nil, 50, math.NaN()},
		{"single", []float64{7}, 99, 7},
		{"median odd", []float64{3, 1, 2}, 50, 2},
		// rank 0.5*(4-1)=1.5 → 2 + 0.5*(3-2)
		{"median even", []float64{4, 1, 3, 2}, 50, 2.5},
		// 1..11: rank 0.95*10=9.5 → 10 + 0.5*(11-10)
		{"p95", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 95, 10.5},
		{"p0", []float64{5, 9}, 0, 5},
		{"p100", []float64{5, 9}, 100, 9},
	}
	for _, tt := range tests {
		if got := Percentile(tt.xs, tt.p); !near(got, tt.want) {
			t.Errorf("%s: Percentile(%v, %g) = %g, want %g", tt.name, tt.xs, tt.p, got, tt.want)
		}
	}
}

func TestJain(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, math.NaN()},
		{[]float64{5, 5, 5, 5}, 1},
		{[]float64{10, 0, 0, 0}, 0.25},
		// (1+2+3)² / (3·(1+4+9)) = 36/42
		{[]float64{1, 2, 3}, 36.0 / 42},
		{[]float64{0, 0}, 1},
	}
	for _, tt := range tests {
		if got := Jain(tt.xs); !near(got, tt.want) {
			t.Errorf("Jain(%v) = %g, want %g", tt.xs, got, tt.want)
		}
	}
}

func TestWeightedFairness(t *testing.T) {
	tests := []struct {
		name    string
		x, max  []float64
		want    float64
		wantErr bool
	}{
		// Each gets half of what it could alone: perfectly fair though Jain < 1.
		{"proportional", []float64{10, 20, 40}, []float64{20, 40, 80}, 1, false},
		// normalized 1, 0.5 → (1.5)² / (2·1.25) = 0.9
		{"unequal", []float64{10, 10}, []float64{10, 20}, 0.9, false},
		{"length mismatch", []float64{1}, []float64{1, 2}, math.NaN(), true},
		{"unknown max", []float64{1, 2}, []float64{1, 0}, math.NaN(), true},
	}
	for _, tt := range tests {
		got, err := WeightedFairness(tt.x, tt.max)
		if (err != nil) != tt.wantErr || !near(got, tt.want) {
			t.Errorf("%s: WeightedFairness = %g, %v; want %g, err %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
	if j := Jain([]float64{10, 20, 40}); near(j, 1) {
		t.Errorf("Jain of unequal throughputs should be < 1, got %g", j)
	}
}

func TestStatOf(t *testing.T) {
	st := StatOf([]float64{3, math.NaN(), 1, 2})
	if st.N != 3 || !near(st.Mean, 2) || st.Min != 1 || st.Max != 3 {
		t.Errorf("StatOf = %+v, want mean 2 min 1 max 3 n 3", st)
	}
	if e := StatOf(nil); e.N != 0 || !math.IsNaN(e.Mean) {
		t.Errorf("StatOf(nil) = %+v, want NaN", e)
	}
}

// The spread over repetitions: sample SD and the Student-t 95 % interval
// of the mean (1, 2, 3: SD 1, t(0.975, 2) = 4.3027, half-width 2.484);
// none from a single repetition.
func TestStatSpread(t *testing.T) {
	st := StatOf([]float64{3, math.NaN(), 1, 2})
	if math.Abs(st.SD-1) > 1e-12 || math.Abs(st.CI95-4.3027/math.Sqrt(3)) > 1e-9 || st.N != 3 {
		t.Errorf("StatOf spread = %+v, want SD 1, CI95 2.484, N 3", st)
	}
	one := StatOf([]float64{5})
	if !math.IsNaN(one.SD) || !math.IsNaN(one.CI95) || one.N != 1 {
		t.Errorf("one repetition: %+v, want no spread", one)
	}
	// Ten repetitions of 0 and 1 alternately: variance 2.5/9, and
	// t(0.975, 9) = 2.2622.
	var xs []float64
	for i := 0; i < 10; i++ {
		xs = append(xs, float64(i%2))
	}
	ten := StatOf(xs)
	if want := 2.2622 * math.Sqrt(2.5/9) / math.Sqrt(10); math.Abs(ten.CI95-want) > 1e-9 {
		t.Errorf("CI95 of 10 = %g, want %g", ten.CI95, want)
	}
}

// Student's t quantiles: the table and the expansion beyond it agree with
// published values (t(0.975, 40) = 2.0211, 60: 2.0003, 120: 1.9799).
func TestTQuantile975(t *testing.T) {
	for df, want := range map[int]float64{1: 12.7062, 2: 4.3027, 4: 2.7764, 30: 2.0423, 31: 2.0395, 40: 2.0211, 60: 2.0003, 120: 1.9799, 100000: 1.96} {
		if got := TQuantile975(df); math.Abs(got-want) > 2e-4 {
			t.Errorf("t(0.975, %d) = %.5f, want %.4f", df, got, want)
		}
	}
	if !math.IsNaN(TQuantile975(0)) {
		t.Error("t(0.975, 0) should be NaN")
	}
}

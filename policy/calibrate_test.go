package policy

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestCalibrationPlan(t *testing.T) {
	plan := CalibrationPlan(10)
	if len(plan) != 63 {
		t.Fatalf("plan has %d steps, want 63 (2× … 64×)", len(plan))
	}
	if plan[0] != (Bounds{Lo: 10, Hi: 20}) || plan[len(plan)-1] != (Bounds{Lo: 630, Hi: 640}) {
		t.Fatalf("plan ends %+v … %+v, want {10 20} … {630 640}", plan[0], plan[len(plan)-1])
	}
	for i, b := range plan {
		k := uint32(i + 2)
		if b.Hi != k*10 || b.Lo != (k-1)*10 {
			t.Fatalf("step %d: %+v, want hi %d× and lo %d× base", i, b, k, k-1)
		}
	}
	if CalibrationPlan(0) != nil {
		t.Fatal("base 0 gave a plan")
	}
	huge := CalibrationPlan(math.MaxUint32)
	if last := huge[len(huge)-1]; last.Hi != math.MaxUint32 || last.Lo > last.Hi {
		t.Fatalf("huge base: %+v, want saturation", last)
	}
}

// synthetic makes RTT rise linearly with the bound up to knee and then stay
// flat (papers/003: RTT proportional while the queue fills, constant once it
// overflows), with optional noise, several readings per setting.
func synthetic(r *rand.Rand, knee float64, noise time.Duration) []Sample {
	var s []Sample
	for k := 2.0; k <= 64; k++ {
		for range 3 {
			rtt := 4*time.Millisecond + time.Duration(min(k, knee)*float64(3*time.Millisecond))
			if noise > 0 {
				rtt += time.Duration((r.Float64()*2 - 1) * float64(noise))
			}
			s = append(s, Sample{Bound: k, RTT: rtt})
		}
	}
	r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s
}

func TestKneeSynthetic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, knee := range []float64{8, 10, 14, 40} { // papers/003 Table 2 found 8×, 8×, 10×, 14×
		got, fit, err := Knee(synthetic(r, knee, 0))
		if err != nil {
			t.Fatal(err)
		}
		if got != knee || fit.SSE > 1e-12 {
			t.Fatalf("noiseless knee %v: got %v (fit %+v)", knee, got, fit)
		}
		if math.Abs(fit.Slope1-0.003) > 1e-9 || math.Abs(fit.Slope2) > 1e-9 {
			t.Fatalf("slopes %v, %v: want 3 ms per step then 0", fit.Slope1, fit.Slope2)
		}
		got, _, err = Knee(synthetic(r, knee, 2*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-knee) > 1 {
			t.Fatalf("noisy knee %v: got %v", knee, got)
		}
	}
}

func TestKneeErrors(t *testing.T) {
	if _, _, err := Knee(nil); !errors.Is(err, ErrTooFewSamples) {
		t.Fatalf("nil: %v", err)
	}
	two := []Sample{{1, time.Millisecond}, {2, 2 * time.Millisecond}, {2, 3 * time.Millisecond}}
	if _, _, err := Knee(two); !errors.Is(err, ErrTooFewSamples) {
		t.Fatalf("two distinct bounds: %v", err)
	}
	if _, _, err := Knee([]Sample{{math.NaN(), 0}, {1, 0}, {2, 0}}); err == nil {
		t.Fatal("NaN bound accepted")
	}
	if _, _, err := Knee([]Sample{{0, -1}, {1, 0}, {2, 0}}); err == nil {
		t.Fatal("negative RTT accepted")
	}
	// Flat data: any knee, but no NaN.
	_, fit, err := Knee([]Sample{{1, time.Second}, {2, time.Second}, {3, time.Second}, {4, time.Second}})
	if err != nil || math.IsNaN(fit.SSE) || fit.SSE != 0 {
		t.Fatalf("flat: %+v %v", fit, err)
	}
}

package ratectl

import "testing"

var gRates = []float64{6, 9, 12, 18, 24, 36, 48, 54}

func feed(a Controller, outcomes string) {
	for _, c := range outcomes {
		a.Report(0, a.Rate(0, 0), c == 'S')
	}
}

// Kamerman & Monteban 1997 / Lacage et al. 2004 §3.1: down after two
// consecutive failures, not after one.
func TestARFDownAfterTwoFailures(t *testing.T) {
	a := NewARF(gRates, 7)
	if r := a.Rate(0, 0); r != 54 {
		t.Fatalf("start %v, want 54", r)
	}
	feed(a, "FSFS")
	if r := a.Rate(0, 0); r != 54 {
		t.Fatalf("isolated failures moved the rate to %v", r)
	}
	feed(a, "FF")
	if r := a.Rate(0, 0); r != 48 {
		t.Fatalf("after 2 failures %v, want 48", r)
	}
	feed(a, "FF")
	if r := a.Rate(0, 0); r != 36 {
		t.Fatalf("after 2 more failures %v, want 36", r)
	}
}

// Up after 10 consecutive successes; the first attempt at the new rate is a
// probe whose failure falls back at once.
func TestARFUpAfterTenSuccessesAndProbeFallback(t *testing.T) {
	a := NewARF(gRates, 7)
	feed(a, "FFFF") // 36
	feed(a, "SSSSSSSSS")
	if r := a.Rate(0, 0); r != 36 {
		t.Fatalf("after 9 successes %v, want 36", r)
	}
	feed(a, "S")
	if r := a.Rate(0, 0); r != 48 {
		t.Fatalf("after 10 successes %v, want 48", r)
	}
	feed(a, "F") // failed probe
	if r := a.Rate(0, 0); r != 36 {
		t.Fatalf("failed probe left the rate at %v, want 36", r)
	}
	if a.SuccessThreshold() != ARFSuccessThreshold {
		t.Fatalf("ARF changed its threshold to %d", a.SuccessThreshold())
	}
}

// The timer (ns-3: 15 attempts) steps up even without 10 successes in a row.
func TestARFTimer(t *testing.T) {
	a := NewARF(gRates, 7)
	feed(a, "FF")         // 48, timer 0
	feed(a, "SSSSSSSSSF") // 10 attempts, success count reset
	feed(a, "SSSS")
	if r := a.Rate(0, 0); r != 48 {
		t.Fatalf("after 14 attempts %v, want 48", r)
	}
	feed(a, "S") // 15th attempt
	if r := a.Rate(0, 0); r != 54 {
		t.Fatalf("timer did not fire: %v", r)
	}
}

func TestARFBounds(t *testing.T) {
	a := NewARF(gRates, 7)
	feed(a, "FFFFFFFFFFFFFFFFFFFFFFFF")
	if r := a.Rate(0, 0); r != 6 {
		t.Fatalf("floor %v", r)
	}
	b := NewARF(gRates, 7)
	feed(b, "SSSSSSSSSSSSSSSSSSSSSSSSSSSSSS")
	if r := b.Rate(0, 0); r != 54 {
		t.Fatalf("ceiling %v", r)
	}
	if !b.Retry(6) || b.Retry(7) {
		t.Fatal("ARF must apply the medium's retry limit (7 attempts)")
	}
}

// Lacage et al. 2004 §4.1: a failed probe doubles the success threshold, at
// most 50; a normal (two-failure) fallback resets it to 10.
func TestAARFThresholdDoublesAndResets(t *testing.T) {
	a := NewAARF(gRates, 7)
	feed(a, "FF") // 48
	want := []int{20, 40, 50, 50}
	for i, w := range want {
		for range a.SuccessThreshold() {
			feed(a, "S")
		}
		if r := a.Rate(0, 0); r != 54 {
			t.Fatalf("round %d: not probing 54 (at %v)", i, r)
		}
		feed(a, "F")
		if got := a.SuccessThreshold(); got != w {
			t.Fatalf("round %d: threshold %d, want %d", i, got, w)
		}
		if r := a.Rate(0, 0); r != 48 {
			t.Fatalf("round %d: failed probe left %v", i, r)
		}
	}
	// 49 successes are not enough at threshold 50 (the timer scaled to 75).
	feed(a, "SSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSS")
	if r := a.Rate(0, 0); r != 48 {
		t.Fatalf("stepped up early at threshold 50: %v", r)
	}
	feed(a, "FF")
	if a.SuccessThreshold() != ARFSuccessThreshold || a.Rate(0, 0) != 36 {
		t.Fatalf("normal fallback: threshold %d rate %v, want 10 and 36", a.SuccessThreshold(), a.Rate(0, 0))
	}
}

func TestNewRejectsUnknownKind(t *testing.T) {
	if _, err := New("sampleRate", Params{Rates: gRates, RetryLimit: 7}); err == nil {
		t.Fatal("unknown kind accepted")
	}
	c, err := New("", Params{Rates: gRates, Start: 24, RetryLimit: 7})
	if err != nil || c.Rate(0, 3) != 24 || c.Retry(7) {
		t.Fatalf("constant: %v %v", c, err)
	}
}

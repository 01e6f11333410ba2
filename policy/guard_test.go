package policy

import (
	"testing"
	"time"
)

func testGuard() *Guard {
	return NewGuard(GuardParams{OnWindow: 10 * time.Second, OffWindow: 4 * time.Second, Settle: time.Second, Backoff: time.Minute, MaxCost: 0.05})
}

// drive feeds samples every 500 ms for d, with rate depending on whether the
// guard lets control be on, and returns the last status.
func drive(g *Guard, t0 *time.Time, d time.Duration, s GuardSample, rateOn, rateOff float64) GuardStatus {
	var st GuardStatus
	for end := t0.Add(d); t0.Before(end); *t0 = t0.Add(500 * time.Millisecond) {
		s.Rate = rateOff
		if g.Status().ControlOn {
			s.Rate = rateOn
		}
		st = g.Observe(*t0, s)
	}
	return st
}

func TestGuardKeepsControlWhenItHelps(t *testing.T) {
	g := testGuard()
	t0 := time.Unix(1000, 0)
	s := GuardSample{Flows: 2, N: 3, Control: true}
	st := drive(g, &t0, 60*time.Second, s, 20e6, 15e6)
	if st.State == GuardDisabled || st.Disables != 0 {
		t.Fatalf("control helps (20 vs 15 MB/s) but guard disabled it: %+v", st)
	}
	if st.Probes < 3 {
		t.Fatalf("want ≥ 3 probes in 60 s with 10 s + 4 s windows, got %d", st.Probes)
	}
	if st.Cost > -0.3 {
		t.Fatalf("cost should be about 1-20/15 = -0.33, got %v", st.Cost)
	}
}

func TestGuardDisablesWhenBoundsCost(t *testing.T) {
	g := testGuard()
	t0 := time.Unix(1000, 0)
	s := GuardSample{Flows: 1, N: 2, Control: true}
	st := drive(g, &t0, 16*time.Second, s, 10e6, 20e6)
	if st.State != GuardDisabled || st.ControlOn || st.Disables != 1 {
		t.Fatalf("bounds cost 50%%: want disabled, got %+v", st)
	}
	if st.Cost < 0.49 || st.Cost > 0.51 {
		t.Fatalf("cost %v, want 0.5", st.Cost)
	}
	// Stays off during the backoff, then tries again.
	st = drive(g, &t0, 50*time.Second, s, 10e6, 20e6)
	if st.State != GuardDisabled {
		t.Fatalf("during backoff: %+v", st)
	}
	st = drive(g, &t0, 12*time.Second, s, 10e6, 20e6)
	if st.State == GuardDisabled || !st.ControlOn && st.State != GuardProbe {
		t.Fatalf("after backoff control should be tried again: %+v", st)
	}
}

func TestGuardToleratesSmallCost(t *testing.T) {
	g := testGuard()
	t0 := time.Unix(1000, 0)
	st := drive(g, &t0, 30*time.Second, GuardSample{Flows: 1, N: 2, Control: true}, 19.2e6, 20e6) // 4 % < 5 %
	if st.Disables != 0 || st.Probes == 0 {
		t.Fatalf("4%% cost is within 5%%: %+v", st)
	}
}

func TestGuardDiscardsChangedSituation(t *testing.T) {
	g := testGuard()
	t0 := time.Unix(1000, 0)
	s := GuardSample{Flows: 1, N: 2, Control: true}
	drive(g, &t0, 12*time.Second, s, 10e6, 20e6) // now probing
	if g.Status().State != GuardProbe {
		t.Fatalf("want probe, got %+v", g.Status())
	}
	s.N = 3 // a terminal joined during the probe: not comparable
	st := drive(g, &t0, time.Second, s, 10e6, 20e6)
	if st.State != GuardOn || st.Probes != 0 || !st.ControlOn {
		t.Fatalf("changed N must discard the probe and resume control: %+v", st)
	}
}

func TestGuardIdleWithoutFlowsOrPolicy(t *testing.T) {
	g := testGuard()
	t0 := time.Unix(1000, 0)
	st := drive(g, &t0, 30*time.Second, GuardSample{Flows: 0, N: 1, Control: true}, 0, 0)
	if st.State != GuardIdle || !st.ControlOn || st.Probes != 0 {
		t.Fatalf("no flows: %+v", st)
	}
	st = drive(g, &t0, 30*time.Second, GuardSample{Flows: 2, N: 1, Control: false}, 1e6, 1e6)
	if st.State != GuardIdle || st.Probes != 0 {
		t.Fatalf("policy not bounding: %+v", st)
	}
}

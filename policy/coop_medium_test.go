package policy

import (
	"testing"
	"time"
)

// TestCompeteTellsASlowerMediumFromSomeoneElsesQueue: the same queue that
// ignores a 30 % cut for two round trips switches coop off on a medium whose
// rate held (hosts without coopcc), and does not when every terminal's PHY
// rate fell since the group was last at its target (rate adaptation: the
// group's own load slowed the medium; lab, testbed2012, docs/policies.md
// step 9) — also when it fell before the episode opened.
func TestCompeteTellsASlowerMediumFromSomeoneElsesQueue(t *testing.T) {
	steady := medium{self: 54, median: 54}
	for _, tc := range []struct {
		name          string
		atOpen, later medium
		verdict       bool
	}{
		{"rates held", steady, steady, true},
		{"rates wobbled by a tenth", steady, medium{self: 49, median: 50}, true},
		{"the medium slowed", steady, medium{self: 24, median: 30}, false},
		{"the medium had slowed when the episode opened", medium{self: 24, median: 30}, medium{self: 24, median: 30}, false},
		{"only this terminal slowed", steady, medium{self: 24, median: 54}, true},
		{"only the peers' median fell", steady, medium{self: 54, median: 12}, true},
		{"rates unknown", medium{}, medium{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, obs := pairObserver()
			s.see(steady)
			obs(-500, 0.030, 1e6) // at the target
			s.see(tc.atOpen)
			obs(0, 0.100, 1e6) // opens
			s.see(tc.later)
			obs(500, 0.200, 0.7e6) // the cut; the queue keeps growing
			var why string
			for ms := 1000; ms <= 4000 && why == ""; ms += 500 {
				why = obs(ms, 0.300, 0.7e6)
			}
			if got := why != ""; got != tc.verdict {
				t.Errorf("switched off: %v (%q), want %v", got, why, tc.verdict)
			}
		})
	}
}

// TestCompeteStillSwitchesOffOnceTheSlowerMediumHolds: a medium that slowed
// restarts the test from where it is and becomes the reference; if the queue
// then ignores the cut made at the new rate, the verdict comes.
func TestCompeteStillSwitchesOffOnceTheSlowerMediumHolds(t *testing.T) {
	s, obs := pairObserver()
	s.see(medium{self: 54, median: 54})
	obs(-500, 0.030, 1e6)
	obs(0, 0.100, 1e6)
	s.see(medium{self: 18, median: 20})
	obs(500, 0.200, 0.7e6)
	var at int
	c := 0.7e6
	for ms := 1000; ms <= 10000 && at == 0; ms += 500 {
		if s.startedAt(t0.Add(time.Duration(ms-500) * time.Millisecond)) {
			c = InelasticCut * c // the restarted test's cut
		}
		if obs(ms, 0.300, c) != "" {
			at = ms
		}
	}
	if at == 0 {
		t.Fatal("no verdict in 10 s of a queue that ignored every cut at a rate that no longer fell")
	}
	if at < 2000 {
		t.Errorf("verdict at %d ms: before the restarted test had its two round trips", at)
	}
}

// TestCompeteRemembersTheMediumBeforeTheFirstEstimate: at 4 ms under ARF a
// slow start runs the medium into collisions before the first estimate (lab,
// testbed2012, 5 coop terminals: the first estimate at a queue of 67 ms,
// four times the target); the rates of the start are the reference.
func TestCompeteRemembersTheMediumBeforeTheFirstEstimate(t *testing.T) {
	s, obs := pairObserver()
	s.see(medium{self: 54, median: 54})
	obs(-500, 0.010, 0) // no estimate yet
	s.see(medium{self: 24, median: 30})
	obs(0, 0.100, 1e6) // the first estimate opens the episode
	obs(500, 0.200, 0.7e6)
	for ms := 1000; ms <= 4000; ms += 500 {
		if why := obs(ms, 0.300, 0.7e6); why != "" {
			t.Fatalf("switched off at %d ms on a medium that slowed from 54 to 24 Mbit/s since the start: %q", ms, why)
		}
	}
}

func TestMediumOf(t *testing.T) {
	m := mediumOf([]terminal{{link: 0}, {link: 54}, {link: 6}, {link: 48}})
	if m.self != 0 || m.median != 48 {
		t.Errorf("mediumOf = %+v, want self 0 (unknown), median 48 of the known 6, 48, 54", m)
	}
	if got := mediumOf(nil); got != (medium{}) {
		t.Errorf("mediumOf(nil) = %+v", got)
	}
	// One liar cannot drag the median of three down.
	if m := mediumOf([]terminal{{link: 54}, {link: 54}, {link: 0.001}}); m.median != 54 {
		t.Errorf("median with one low report = %v, want 54", m.median)
	}
}

// TestCompeteReferenceMediumIsNotADip replays the lab's testbed2012 run
// (dynamic-2013 quick, 2026-11-26): at the target the rates went 46, 39, 43,
// 32 Mbit/s (the group's median 44, 33, 43, 37) in four ticks, then the
// queue grew while they ran at 22–31. Taken as it was at the last tick at
// the target (32, 37) the reference made that no slowing, and the verdict
// took the group off; remembered (atTarget) it is. A medium that stays at
// 32 for good becomes the reference within seconds.
func TestCompeteReferenceMediumIsNotADip(t *testing.T) {
	atTarget := []medium{{46, 44}, {39, 33}, {43, 43}, {32, 37}}
	episode := func(s *compete, obs func(ms int, d, c float64) string, from int) string {
		s.see(medium{self: 30, median: 31})
		obs(from, 0.100, 1e6) // opens
		obs(from+500, 0.200, 0.7e6)
		var why string
		for ms := from + 1000; ms <= from+4000 && why == ""; ms += 500 {
			why = obs(ms, 0.300, 0.7e6)
		}
		return why
	}
	s, obs := pairObserver()
	for i, m := range atTarget {
		s.see(m)
		obs(-2000+500*i, 0.030, 1e6)
	}
	if why := episode(s, obs, 0); why != "" {
		t.Errorf("rates 30/31 after 46–32 at the target: switched off (%q); reference %+v", why, s.medAt)
	}
	s, obs = pairObserver()
	s.see(medium{self: 46, median: 44})
	obs(-20500, 0.030, 1e6)
	for ms := -20000; ms < 0; ms += 500 {
		s.see(medium{self: 32, median: 32})
		obs(ms, 0.030, 1e6)
	}
	if why := episode(s, obs, 0); why == "" {
		t.Errorf("20 s at 32 Mbit/s, then 30/31 and a queue that ignores the cut: no verdict; reference %+v", s.medAt)
	}
}

package ktime

import (
	"testing"
	"time"
)

// Now advances with real time and never goes back.
func TestNowAdvances(t *testing.T) {
	a, err := Now()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	b, err := Now()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Duration(b - a); b < a || d < 10*time.Millisecond || d > 5*time.Second {
		t.Fatalf("Now went from %d to %d (%v) over a 10 ms sleep", a, b, d)
	}
}

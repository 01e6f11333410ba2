package policy

import (
	"testing"
	"time"
)

func TestQueueTracePeak(t *testing.T) {
	var q queueTrace
	for i, d := range []float64{1.15, 0.377, 0.948, 0.503} {
		q.note(t0.Add(time.Duration(i)*500*time.Millisecond), d)
	}
	now := t0.Add(1500 * time.Millisecond)
	for _, tc := range []struct {
		span time.Duration
		want float64
	}{{0, 0.503}, {time.Second, 0.948}, {2 * time.Second, 1.15}, {-time.Second, 0}} {
		if got := q.peak(now, tc.span); got != tc.want {
			t.Errorf("peak over %v: %v, want %v", tc.span, got, tc.want)
		}
	}
	for i := range 2 * traceLen {
		q.note(now.Add(time.Duration(i+1)*time.Millisecond), 0.1)
	}
	if len(q.at) != traceLen || q.peak(now.Add(time.Hour), 2*time.Hour) != 0.1 {
		t.Errorf("trace of %d samples, peak %v: want the last %d, all 0.1", len(q.at), q.peak(now.Add(time.Hour), 2*time.Hour), traceLen)
	}
	q.note(t0, 2) // the clock went back
	if len(q.at) != 1 || q.peak(t0, time.Second) != 2 {
		t.Errorf("after the clock went back: %d samples, want 1", len(q.at))
	}
}

package policy

import "time"

// queueTrace keeps the group's queueing delay at its recent evaluations,
// for the judgments that must not rest on one sample (peak): beside hosts
// without coopcc under rate adaptation their queue swings by a factor of
// three from one evaluation to the next (lab, papers/004's
// coexistence-2012, 2026-11-28: 1.15 s, 377 ms, 948 ms, 503 ms in 1.5 s),
// and one low sample read as a queue that followed the group's windows.
type queueTrace struct {
	at []time.Time
	d  []float64
}

// traceLen is how many evaluations the trace keeps: 32 s at the default
// 0.5 s, two round trips at the longest queues the lab has seen.
const traceLen = 64

// note records the group's queue d (s) at now. A clock that went back
// starts the trace again.
func (q *queueTrace) note(now time.Time, d float64) {
	if n := len(q.at); n > 0 && now.Before(q.at[n-1]) {
		q.at, q.d = q.at[:0], q.d[:0]
	}
	if len(q.at) == traceLen {
		q.at, q.d = q.at[1:], q.d[1:]
	}
	q.at, q.d = append(q.at, now), append(q.d, d)
}

// peak is the largest queue (s) recorded within span before now (0 = none).
func (q *queueTrace) peak(now time.Time, span time.Duration) float64 {
	p := 0.0
	for i := len(q.at) - 1; i >= 0 && !q.at[i].Before(now.Add(-span)); i-- {
		p = max(p, q.d[i])
	}
	return p
}

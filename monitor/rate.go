package monitor

import (
	"time"
)

// RateTracker computes each flow's throughput between two polls from the
// growth of tcpi_bytes_acked (what the peer acknowledged, i.e. goodput plus
// retransmission-free delivery), keyed by socket cookie.
type RateTracker struct {
	prev map[uint64]rateSample
	next map[uint64]rateSample
}

type rateSample struct {
	t     time.Time
	acked uint64
	rcvd  uint64
}

// NewRateTracker returns an empty tracker.
func NewRateTracker() *RateTracker {
	return &RateTracker{prev: map[uint64]rateSample{}, next: map[uint64]rateSample{}}
}

// Update records the snapshot taken at t and returns, per flow (same
// index), the throughput in bytes/s since the previous snapshot that held
// the flow: bytes acknowledged by the peer for a sender, bytes received for
// a receiver, whichever grew more. New flows get 0.
func (r *RateTracker) Update(t time.Time, flows []Flow) []float64 {
	out := make([]float64, len(flows))
	clear(r.next)
	for i := range flows {
		f := &flows[i]
		s := rateSample{t: t, acked: f.BytesAcked, rcvd: f.BytesReceived}
		if p, ok := r.prev[f.Cookie]; ok {
			if dt := t.Sub(p.t).Seconds(); dt > 0 {
				d := max(sub(s.acked, p.acked), sub(s.rcvd, p.rcvd))
				out[i] = float64(d) / dt
			}
		}
		r.next[f.Cookie] = s
	}
	r.prev, r.next = r.next, r.prev
	return out
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

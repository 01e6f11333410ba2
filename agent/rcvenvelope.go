package agent

import (
	"net/netip"
	"time"
)

// rcvEnvelope turns the policy's upper bound for a remote sender into the
// receive window clamp the datapath holds: the largest bound in force over
// the last window (the upper envelope), not every tick's value.
//
// Why: every increase of a connection's TCP_WINDOW_CLAMP makes Linux regrow
// its rcv_ssthresh segment by segment, and tcp_grow_window puts the receiver
// in quick-ACK mode for each segment of that growth: it acknowledges every
// segment instead of every second one. coop's bound follows its probe cycle
// (±20 % every few ticks); applied as it came, the downloads of the lab's
// `downloads` preset (10 terminals, 256 ms) sent 0.79–0.85 ACKs per data
// frame instead of cubic's 0.57, and on a shared 802.11 medium every ACK
// frame costs a contention round: 0.83–0.87 × cubic's aggregate, against
// 0.97 × with the receive side off. A window clamp bounds what the sender
// may have in flight; it needs no per-tick precision, so the envelope keeps
// it at the top of the probe cycle and changes it only when the cycle moves.
type rcvEnvelope struct {
	window time.Duration
	hist   map[netip.Addr][]rcvStep // per destination, oldest first
}

// rcvStep is a bound and when it came into force.
type rcvStep struct {
	since time.Time
	hi    uint32
}

func newRcvEnvelope(window time.Duration) *rcvEnvelope {
	return &rcvEnvelope{window: window, hist: map[netip.Addr][]rcvStep{}}
}

// set records that hi is the policy's bound for dst from now on and returns
// the clamp to hold. 0 (no bound) is never delayed: it releases at once and
// forgets the history.
func (e *rcvEnvelope) set(dst netip.Addr, hi uint32, now time.Time) uint32 {
	if hi == 0 {
		delete(e.hist, dst)
		return 0
	}
	e.hist[dst] = append(e.hist[dst], rcvStep{since: now, hi: hi})
	return e.at(dst, now)
}

// forget drops dst (its bound was deleted).
func (e *rcvEnvelope) forget(dst netip.Addr) { delete(e.hist, dst) }

// at is the envelope for dst at now: the largest bound in force at any time
// in [now − window, now]. A step stays in force until the next one, so the
// latest always counts.
func (e *rcvEnvelope) at(dst netip.Addr, now time.Time) uint32 {
	h := e.hist[dst]
	from := now.Add(-e.window)
	// Drop steps that were replaced before the window began.
	k := 0
	for k+1 < len(h) && !h[k+1].since.After(from) {
		k++
	}
	h = h[k:]
	e.hist[dst] = h
	var hi uint32
	for _, s := range h {
		hi = max(hi, s.hi)
	}
	return hi
}

// dsts lists the destinations with a bound.
func (e *rcvEnvelope) dsts() []netip.Addr {
	out := make([]netip.Addr, 0, len(e.hist))
	for d := range e.hist {
		out = append(out, d)
	}
	return out
}

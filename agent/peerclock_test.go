package agent

import (
	"testing"
	"time"
)

// TestPeerClocks: a peer whose clock runs 3 s behind, whose statuses reach
// a tick 50–400 ms after they were sent. Each status is placed in this
// terminal's clock by the least delay seen so far; a status sent before a
// moment never comes out after it once a prompt one has been seen, and a
// peer that left is forgotten.
func TestPeerClocks(t *testing.T) {
	c := peerClocks{}
	t0 := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	const skew = -3 * time.Second
	see := func(sentLocal time.Time, delay time.Duration) time.Time {
		s := PeerStatus{Sender: 7, SentAt: sentLocal.Add(skew)}
		return c.sent(sentLocal.Add(delay), s)
	}
	// A late first status: placed 400 ms late (the least delay yet).
	if got := see(t0, 400*time.Millisecond); got.Sub(t0) != 400*time.Millisecond {
		t.Fatalf("first status sent at 0: placed at %v", got.Sub(t0))
	}
	// A prompt one lowers the least delay to 50 ms.
	if got := see(t0.Add(time.Second), 50*time.Millisecond); got.Sub(t0) != 1050*time.Millisecond {
		t.Fatalf("status sent at 1 s, seen 50 ms later: placed at %v", got.Sub(t0))
	}
	// From then on a status is placed 50 ms after it was sent, however late
	// it arrives: one sent at 2 s and seen at 4 s is not "since 3 s".
	if got := see(t0.Add(2*time.Second), 2*time.Second); got.Sub(t0) != 2050*time.Millisecond {
		t.Fatalf("status sent at 2 s, seen 2 s later: placed at %v, want 2.05 s", got.Sub(t0))
	}
	c.keep([]PeerStatus{{Sender: 8}})
	if _, ok := c[7]; ok || len(c) != 0 {
		t.Fatalf("a peer no longer live is remembered: %v", c)
	}
}

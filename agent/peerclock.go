package agent

import "time"

// peerClocks places the peers' statuses in this terminal's clock: per peer
// (its sender id), the smallest delay yet from a status's send time (the
// peer's clock) to the tick that saw it — the clocks' offset plus the least
// transit and wait for a tick. A status's send time plus that delay is when
// it was sent here, late by at most the least transit and wait. The policy
// uses it to tell a peer's status sent since some moment from one sent
// before (PeerView.Sent): a peer stays live for six status intervals after
// its last status, while the statuses it sent since may have been lost
// behind a full AP queue. Not safe for concurrent use.
type peerClocks map[uint64]time.Duration

// sent returns when s, seen at the tick at now, was sent, in this
// terminal's clock.
func (c peerClocks) sent(now time.Time, s PeerStatus) time.Time {
	d := now.Sub(s.SentAt)
	if least, ok := c[s.Sender]; !ok || d < least {
		c[s.Sender] = d
	}
	return s.SentAt.Add(c[s.Sender])
}

// keep forgets the peers that are not among live.
func (c peerClocks) keep(live []PeerStatus) {
	ids := make(map[uint64]bool, len(live))
	for _, s := range live {
		ids[s.Sender] = true
	}
	for id := range c {
		if !ids[id] {
			delete(c, id)
		}
	}
}

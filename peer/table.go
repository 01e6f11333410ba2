package peer

import (
	"cmp"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// Table defaults (docs/protocol.md, section "Receiver rules").
const (
	DefaultMaxPeers  = 1024
	DefaultInterval  = 300 * time.Millisecond
	DefaultMissed    = 3 // intervals a peer may miss before it expires
	DefaultExpiry    = DefaultMissed*DefaultInterval + 100*time.Millisecond
	DefaultWindow    = 5 * time.Second // accepted |send time - receiver time|
	DefaultRate      = 10.0            // messages/s per sender (a sender sends ~3.3)
	DefaultRateBurst = 10
)

// TableConfig configures a Table; zero fields take the defaults above.
type TableConfig struct {
	MaxPeers int           // entries kept, live or remembered for replay protection
	Expiry   time.Duration // a peer not heard for this long is no longer live
	Window   time.Duration // messages whose send time is further from now are Stale
	Rate     float64       // per-sender token bucket: messages per second ...
	Burst    int           // ... and bucket depth
	Self     uint64        // own sender id: such messages count as Self
	// OnEvent, if set, is called for every join and leave, in order, from
	// the goroutine that caused it and without the table's lock held.
	OnEvent func(Event)
}

func (c TableConfig) withDefaults() TableConfig {
	if c.MaxPeers <= 0 {
		c.MaxPeers = DefaultMaxPeers
	}
	if c.Expiry <= 0 {
		c.Expiry = DefaultExpiry
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.Rate <= 0 {
		c.Rate = DefaultRate
	}
	if c.Burst <= 0 {
		c.Burst = DefaultRateBurst
	}
	return c
}

// EventKind says whether a peer joined or left.
type EventKind uint8

// Event kinds.
const (
	Join EventKind = iota + 1
	Leave
)

func (k EventKind) String() string {
	switch k {
	case Join:
		return "join"
	case Leave:
		return "leave"
	}
	return "unknown"
}

// Event is a peer becoming live (Join) or ceasing to be (Leave).
type Event struct {
	Kind   EventKind
	Peer   uint64    // sender id
	At     time.Time // receiver clock
	Why    string    // leave: "expired", "goodbye" or "evicted"; join: "heard"
	Status Status    // the peer's last accepted status
}

// Counters are a Table's cumulative counts.
type Counters struct {
	ByReason  map[Reason]uint64 // datagrams by outcome; OK = accepted
	Joins     uint64
	Leaves    uint64
	Evictions uint64 // entries dropped because the table was full
	Entries   int    // entries now (live or remembered)
}

// Rejected returns the number of datagrams rejected for any reason.
func (c Counters) Rejected() uint64 {
	var n uint64
	for r, v := range c.ByReason {
		if r != OK {
			n += v
		}
	}
	return n
}

type entry struct {
	src       netip.Addr // source address the sender id is bound to (invalid = unknown)
	last      Status     // last accepted status
	heard     time.Time  // receiver time of the last accepted message
	maxSent   time.Time  // latest send time accepted (replay memory horizon)
	live      bool       // joined and not yet left
	tokens    float64
	tokenTime time.Time
}

// Table is the receiver side of the protocol: it checks the replay and
// rate rules that need state, keeps the peers it hears, expires them, and
// counts every datagram by Reason. It is safe for concurrent use.
//
// An entry is remembered after its peer stops being live, until its last
// send time is older than the window, so that a captured message cannot be
// replayed into the table after the peer has expired. The table holds at
// most MaxPeers entries; a new sender evicts the stalest. Anyone holding the
// group key can still fill the table with made-up sender ids (and so push
// real peers out): the key is the trust boundary.
//
// A sender id is bound to the source address it was first accepted from
// (ReceiveFrom): while the id is live, a message carrying it from another
// address is rejected as Spoofed before its sequence number is looked at, so
// a key holder cannot silence an honest peer by sending one message with the
// peer's id and a huge sequence number. The binding moves only after the id
// went quiet for Expiry (its replay memory is kept). Forging the source
// address itself is outside what the group key protects (docs/protocol.md §8).
type Table struct {
	codec *Codec
	cfg   TableConfig

	mu      sync.Mutex
	peers   map[uint64]*entry
	counts  [numReasons]uint64
	joins   uint64
	leaves  uint64
	evicted uint64
	pending []Event

	emitMu sync.Mutex
}

// NewTable returns an empty table that decodes with codec (which may be nil
// if only Offer is used).
func NewTable(codec *Codec, cfg TableConfig) *Table {
	return &Table{codec: codec, cfg: cfg.withDefaults(), peers: make(map[uint64]*entry)}
}

// Config returns the table's configuration with defaults filled in.
func (t *Table) Config() TableConfig { return t.cfg }

// Receive decodes one datagram received at now and offers it to the table.
// It returns the decoded status (zero unless the reason is OK or one of the
// stateful rejections) and the outcome, which is also counted.
func (t *Table) Receive(now time.Time, msg []byte) (Status, Reason) {
	return t.ReceiveFrom(now, netip.Addr{}, msg)
}

// ReceiveFrom is Receive for a datagram that arrived from src: the sender id
// is bound to src (see Table). An invalid src skips the binding check.
func (t *Table) ReceiveFrom(now time.Time, src netip.Addr, msg []byte) (Status, Reason) {
	s, err := t.codec.Decode(msg)
	if err != nil {
		r := ReasonOf(err)
		t.mu.Lock()
		t.counts[r]++
		t.mu.Unlock()
		return Status{}, r
	}
	return s, t.offer(now, src, s)
}

// Offer applies the stateful rules to a decoded, authenticated status, in
// this order: Self, Stale (send time outside ±Window of now), Replay
// (sequence not above the last accepted), RateLimited (per-sender token
// bucket). On OK the peer's entry is updated and may Join (or Leave, for a
// goodbye). The outcome is counted.
func (t *Table) Offer(now time.Time, s Status) Reason {
	return t.offer(now, netip.Addr{}, s)
}

func (t *Table) offer(now time.Time, src netip.Addr, s Status) Reason {
	t.mu.Lock()
	r := t.offerLocked(now, src, s)
	t.counts[r]++
	t.mu.Unlock()
	t.flush()
	return r
}

func (t *Table) offerLocked(now time.Time, src netip.Addr, s Status) Reason {
	if s.Sender == t.cfg.Self {
		return Self
	}
	if d := s.SentAt.Sub(now); d > t.cfg.Window || d < -t.cfg.Window {
		return Stale
	}
	e := t.peers[s.Sender]
	if e != nil && src.IsValid() && e.src.IsValid() && src != e.src {
		if now.Sub(e.heard) <= t.cfg.Expiry {
			return Spoofed
		}
		e.src = netip.Addr{} // quiet for Expiry: the id may move (replay memory kept)
	}
	if e != nil && s.Seq <= e.last.Seq {
		return Replay
	}
	if e == nil {
		if len(t.peers) >= t.cfg.MaxPeers {
			t.evictStalestLocked(now)
		}
		e = &entry{tokens: float64(t.cfg.Burst), tokenTime: now}
		t.peers[s.Sender] = e
	}
	e.tokens = min(float64(t.cfg.Burst), e.tokens+now.Sub(e.tokenTime).Seconds()*t.cfg.Rate)
	e.tokenTime = now
	if e.tokens < 1 {
		if e.last.Seq == 0 { // never accepted: do not keep an empty entry
			delete(t.peers, s.Sender)
		}
		return RateLimited
	}
	e.tokens--

	// Quiet for Expiry by both clocks: this receiver heard nothing, and the
	// sender sent nothing in between. A receiver that did not run for a
	// while (stopped, starved of a CPU) reads the statuses that queued
	// meanwhile late by its own clock only (Node.at).
	if e.live && now.Sub(e.heard) > t.cfg.Expiry && s.SentAt.Sub(e.last.SentAt) > t.cfg.Expiry {
		t.leaveLocked(e, now, "expired")
	}
	e.last, e.heard = s, now
	if !e.src.IsValid() {
		e.src = src
	}
	if s.SentAt.After(e.maxSent) {
		e.maxSent = s.SentAt
	}
	switch {
	case s.Leaving && e.live:
		t.leaveLocked(e, now, "goodbye")
	case !s.Leaving && !e.live:
		e.live = true
		t.joins++
		t.pending = append(t.pending, Event{Kind: Join, Peer: s.Sender, At: now, Why: "heard", Status: s})
	}
	return OK
}

func (t *Table) leaveLocked(e *entry, now time.Time, why string) {
	e.live = false
	t.leaves++
	t.pending = append(t.pending, Event{Kind: Leave, Peer: e.last.Sender, At: now, Why: why, Status: e.last})
}

func (t *Table) evictStalestLocked(now time.Time) {
	var victim uint64
	var oldest *entry
	for id, e := range t.peers {
		if oldest == nil || e.heard.Before(oldest.heard) {
			victim, oldest = id, e
		}
	}
	if oldest == nil {
		return
	}
	if oldest.live && now.Sub(oldest.heard) <= t.cfg.Expiry {
		t.leaveLocked(oldest, now, "evicted")
	} else if oldest.live {
		t.leaveLocked(oldest, now, "expired")
	}
	delete(t.peers, victim)
	t.evicted++
}

// Expire emits Leave for peers not heard within Expiry and forgets entries
// whose replay memory is no longer needed. Call it periodically (Node does,
// every interval/3); Live and N are correct without it.
func (t *Table) Expire(now time.Time) {
	t.mu.Lock()
	for id, e := range t.peers {
		if now.Sub(e.heard) <= t.cfg.Expiry {
			continue
		}
		if e.live {
			t.leaveLocked(e, now, "expired")
		}
		if now.Sub(e.maxSent) > t.cfg.Window && now.Sub(e.heard) > t.cfg.Window {
			delete(t.peers, id)
		}
	}
	t.mu.Unlock()
	t.flush()
}

func (t *Table) flush() {
	if t.cfg.OnEvent == nil {
		t.mu.Lock()
		t.pending = t.pending[:0]
		t.mu.Unlock()
		return
	}
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	t.mu.Lock()
	evs := t.pending
	t.pending = nil
	t.mu.Unlock()
	for _, ev := range evs {
		t.cfg.OnEvent(ev)
	}
}

func (t *Table) isLive(e *entry, now time.Time) bool {
	return e.live && now.Sub(e.heard) <= t.cfg.Expiry
}

// Live returns the last status of every live peer (not self), by sender id.
func (t *Table) Live(now time.Time) []Status {
	t.mu.Lock()
	out := make([]Status, 0, len(t.peers))
	for _, e := range t.peers {
		if t.isLive(e, now) {
			out = append(out, e.last)
		}
	}
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b Status) int { return cmp.Compare(a.Sender, b.Sender) })
	return out
}

// N returns the number of active terminals: self (always counted: the
// caller is the one about to upload) plus every live peer with at least one
// active upload or download.
func (t *Table) N(now time.Time) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 1
	for _, e := range t.peers {
		if t.isLive(e, now) && (e.last.ActiveFlows > 0 || e.last.DownFlows > 0) {
			n++
		}
	}
	return n
}

// Counters returns the cumulative counts.
func (t *Table) Counters() Counters {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := Counters{ByReason: make(map[Reason]uint64, numReasons), Joins: t.joins, Leaves: t.leaves, Evictions: t.evicted, Entries: len(t.peers)}
	for r, v := range t.counts {
		c.ByReason[Reason(r)] = v
	}
	return c
}

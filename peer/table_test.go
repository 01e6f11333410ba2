package peer

import (
	"net/netip"
	"testing"
	"time"
)

func st(sender, seq uint64, at time.Time, flows uint32) Status {
	return Status{Sender: sender, Seq: seq, SentAt: at, ActiveFlows: flows}
}

func TestTableJoinExpireAndN(t *testing.T) {
	var events []Event
	tb := NewTable(nil, TableConfig{Self: 99, OnEvent: func(e Event) { events = append(events, e) }})
	t0 := time.Unix(1_800_000_000, 0)
	if r := tb.Offer(t0, st(1, 1, t0, 1)); r != OK {
		t.Fatal(r)
	}
	tb.Offer(t0, st(2, 1, t0, 0)) // idle peer: live but not counted in N
	tb.Offer(t0, st(3, 1, t0, 4))
	if r := tb.Offer(t0, st(99, 1, t0, 1)); r != Self {
		t.Fatalf("own message: %v", r)
	}
	if n := tb.N(t0); n != 3 {
		t.Fatalf("N = %d, want 3 (self + two active peers)", n)
	}
	if live := tb.Live(t0); len(live) != 3 || live[0].Sender != 1 {
		t.Fatalf("live %+v", live)
	}
	// Peer 1 keeps talking, 2 and 3 go silent.
	t1 := t0.Add(DefaultExpiry)
	tb.Offer(t1, st(1, 2, t1, 1))
	t2 := t0.Add(DefaultExpiry + time.Millisecond)
	if n := tb.N(t2); n != 2 {
		t.Fatalf("N after expiry = %d, want 2", n)
	}
	tb.Expire(t2)
	var joins, leaves int
	for _, e := range events {
		switch e.Kind {
		case Join:
			joins++
		case Leave:
			leaves++
			if e.Why != "expired" || (e.Peer != 2 && e.Peer != 3) {
				t.Fatalf("unexpected leave %+v", e)
			}
		}
	}
	if joins != 3 || leaves != 2 {
		t.Fatalf("joins %d leaves %d: %+v", joins, leaves, events)
	}
	c := tb.Counters()
	if c.ByReason[OK] != 4 || c.ByReason[Self] != 1 || c.Joins != 3 || c.Leaves != 2 {
		t.Fatalf("counters %+v", c)
	}
	// The expired peers stay remembered (replay memory) until the window passes.
	if c.Entries != 3 {
		t.Fatalf("entries %d, want 3", c.Entries)
	}
	if r := tb.Offer(t2, st(2, 1, t0, 0)); r != Replay {
		t.Fatalf("replayed message of an expired peer: %v, want replay", r)
	}
	tb.Expire(t0.Add(DefaultWindow + time.Second))
	if c := tb.Counters(); c.Entries != 1 {
		t.Fatalf("entries after window %d, want 1", c.Entries)
	}
}

func TestTableReplayStaleRate(t *testing.T) {
	tb := NewTable(nil, TableConfig{Rate: 2, Burst: 3})
	t0 := time.Unix(1_800_000_000, 0)
	if r := tb.Offer(t0, st(1, 5, t0, 1)); r != OK {
		t.Fatal(r)
	}
	for _, seq := range []uint64{5, 4, 1} {
		if r := tb.Offer(t0, st(1, seq, t0, 1)); r != Replay {
			t.Fatalf("seq %d: %v, want replay", seq, r)
		}
	}
	if r := tb.Offer(t0, st(1, 6, t0.Add(-DefaultWindow-time.Millisecond), 1)); r != Stale {
		t.Fatalf("old send time: %v", r)
	}
	if r := tb.Offer(t0, st(1, 6, t0.Add(DefaultWindow+time.Millisecond), 1)); r != Stale {
		t.Fatalf("future send time: %v", r)
	}
	// Burst 3: one used; two more pass, the next is limited; replays did not use tokens.
	for i, want := range []Reason{OK, OK, RateLimited} {
		if r := tb.Offer(t0, st(1, uint64(6+i), t0, 1)); r != want {
			t.Fatalf("message %d: %v, want %v", i, r, want)
		}
	}
	// Half a second later one token (rate 2/s) is back.
	t1 := t0.Add(500 * time.Millisecond)
	if r := tb.Offer(t1, st(1, 9, t1, 1)); r != OK {
		t.Fatalf("after refill: %v", r)
	}
	c := tb.Counters()
	if c.ByReason[Replay] != 3 || c.ByReason[Stale] != 2 || c.ByReason[RateLimited] != 1 || c.ByReason[OK] != 4 {
		t.Fatalf("counters %+v", c.ByReason)
	}
}

func TestTableBoundedEvictsStalest(t *testing.T) {
	var evicted []uint64
	tb := NewTable(nil, TableConfig{MaxPeers: 4, OnEvent: func(e Event) {
		if e.Why == "evicted" {
			evicted = append(evicted, e.Peer)
		}
	}})
	t0 := time.Unix(1_800_000_000, 0)
	for i := uint64(1); i <= 10; i++ {
		now := t0.Add(time.Duration(i) * time.Millisecond)
		tb.Offer(now, st(i, 1, now, 1))
	}
	c := tb.Counters()
	if c.Entries != 4 || c.Evictions != 6 {
		t.Fatalf("entries %d evictions %d", c.Entries, c.Evictions)
	}
	live := tb.Live(t0.Add(10 * time.Millisecond))
	if len(live) != 4 || live[0].Sender != 7 {
		t.Fatalf("kept %+v, want the 4 most recent (7..10)", live)
	}
	if len(evicted) != 6 || evicted[0] != 1 {
		t.Fatalf("evicted %v", evicted)
	}
}

func TestTableGoodbye(t *testing.T) {
	var last Event
	tb := NewTable(nil, TableConfig{OnEvent: func(e Event) { last = e }})
	t0 := time.Unix(1_800_000_000, 0)
	tb.Offer(t0, st(1, 1, t0, 1))
	bye := st(1, 2, t0, 1)
	bye.Leaving = true
	if r := tb.Offer(t0, bye); r != OK {
		t.Fatal(r)
	}
	if last.Kind != Leave || last.Why != "goodbye" || tb.N(t0) != 1 {
		t.Fatalf("after goodbye: event %+v, N %d", last, tb.N(t0))
	}
}

func TestTableReceiveCountsDecodeReasons(t *testing.T) {
	c := NewCodec(testKey, GroupID("lab"))
	tb := NewTable(c, TableConfig{})
	s := sampleStatus()
	now := s.SentAt
	msg, _ := c.Encode(s)
	if _, r := tb.Receive(now, msg); r != OK {
		t.Fatal(r)
	}
	if _, r := tb.Receive(now, msg); r != Replay {
		t.Fatalf("same bytes again: %v", r)
	}
	bad, _ := NewCodec(Key{7}, GroupID("lab")).Encode(s)
	if _, r := tb.Receive(now, bad); r != BadMAC {
		t.Fatal(r)
	}
	cn := tb.Counters()
	if cn.ByReason[OK] != 1 || cn.ByReason[Replay] != 1 || cn.ByReason[BadMAC] != 1 || cn.Rejected() != 2 {
		t.Fatalf("%+v", cn.ByReason)
	}
}

// A key holder who sends one message with an honest peer's sender id and a
// huge sequence number from its own address must not silence that peer: the
// id is bound to the address it was first heard from.
func TestTableForgedSequenceCannotSilenceHonestPeer(t *testing.T) {
	c := NewCodec(testKey, GroupID("lab"))
	tb := NewTable(c, TableConfig{})
	honest, attacker := netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.66")
	t0 := time.Unix(1_800_000_000, 0)
	send := func(from netip.Addr, seq uint64, at time.Time) Reason {
		t.Helper()
		msg, err := c.Encode(st(42, seq, at, 1))
		if err != nil {
			t.Fatal(err)
		}
		_, r := tb.ReceiveFrom(at, from, msg)
		return r
	}
	if r := send(honest, 1, t0); r != OK {
		t.Fatalf("honest first message: %v", r)
	}
	if r := send(attacker, 1<<62, t0.Add(100*time.Millisecond)); r != Spoofed {
		t.Fatalf("forged huge sequence from another address: %v, want spoofed", r)
	}
	for k := uint64(2); k <= 20; k++ {
		at := t0.Add(time.Duration(k) * 300 * time.Millisecond)
		if r := send(honest, k, at); r != OK {
			t.Fatalf("honest message %d after the forgery: %v", k, r)
		}
		if r := send(attacker, 1<<62+k, at); r != Spoofed {
			t.Fatalf("forgery %d: %v", k, r)
		}
	}
	if got := tb.Counters().ByReason[Spoofed]; got != 20 {
		t.Errorf("spoofed count %d, want 20", got)
	}
	// The honest peer is live and its last status is its own.
	live := tb.Live(t0.Add(6 * time.Second))
	if len(live) != 1 || live[0].Seq != 20 {
		t.Fatalf("live peers %+v, want the honest one at seq 20", live)
	}
	// After the id went quiet for longer than Expiry it may move (a peer that
	// changed address), but its replay memory stays: old sequence numbers are
	// still replays.
	later := t0.Add(6*time.Second + DefaultExpiry + time.Millisecond)
	if r := send(attacker, 5, later); r != Replay {
		t.Fatalf("quiet id, old sequence from a new address: %v, want replay", r)
	}
	if r := send(attacker, 21, later); r != OK {
		t.Fatalf("quiet id, new sequence from a new address: %v, want ok", r)
	}
}

// A peer that only downloads counts in N like one that uploads.
func TestTableNCountsDownloads(t *testing.T) {
	tb := NewTable(nil, TableConfig{Self: 99})
	t0 := time.Unix(1_800_000_000, 0)
	tb.Offer(t0, st(1, 1, t0, 1))
	down := st(2, 1, t0, 0)
	down.DownFlows, down.DownRate = 1, 1_000_000
	tb.Offer(t0, down)
	tb.Offer(t0, st(3, 1, t0, 0)) // idle both ways
	if n := tb.N(t0); n != 3 {
		t.Fatalf("N = %d, want 3 (self, an uploader, a downloader; not the idle peer)", n)
	}
}

package peer

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// loopbackPair returns two real UDP transports on 127.0.0.1 that send to
// each other (no root, no interface binding), to test the Node's loops.
func loopbackPair(t *testing.T) (*UDPTransport, *UDPTransport) {
	t.Helper()
	open := func() *net.UDPConn {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ca, cb := open(), open()
	a := &UDPTransport{conn: ca, dst: cb.LocalAddr().(*net.UDPAddr).AddrPort(), desc: "loopback a"}
	b := &UDPTransport{conn: cb, dst: ca.LocalAddr().(*net.UDPAddr).AddrPort(), desc: "loopback b"}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

func TestNewNodeValidates(t *testing.T) {
	a, _ := loopbackPair(t)
	c := NewCodec(testKey, GroupID("n"))
	st := func() Status { return Status{} }
	for name, cfg := range map[string]NodeConfig{
		"no codec":     {Transport: a, Status: st},
		"no transport": {Codec: c, Status: st},
		"no status":    {Codec: c, Transport: a},
		"interval":     {Codec: c, Transport: a, Status: st, Interval: time.Millisecond},
		"jitter":       {Codec: c, Transport: a, Status: st, Jitter: 0.9},
	} {
		if _, err := NewNode(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	n, err := NewNode(NodeConfig{Codec: c, Transport: a, Status: st})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Table().Config().Expiry; got != DefaultExpiry {
		t.Fatalf("default expiry %v, want %v", got, DefaultExpiry)
	}
	if n.Table().Config().Self != n.ID() || n.ID() == 0 {
		t.Fatal("table does not know the node's own id")
	}
	for range 1000 {
		if g := n.nextGap(); g < 270*time.Millisecond || g > 330*time.Millisecond {
			t.Fatalf("gap %v outside 300 ms ± 10 %%", g)
		}
	}
}

func TestNodeLoopsOverLoopback(t *testing.T) {
	ta, tb := loopbackPair(t)
	c := NewCodec(testKey, GroupID("n"))
	var mu sync.Mutex
	var events []Event
	a, err := NewNode(NodeConfig{Codec: c, Transport: ta, Interval: 20 * time.Millisecond,
		Status: func() Status { return Status{ActiveFlows: 1, SRTT: 90 * time.Second, Policy: "Static"} }})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewNode(NodeConfig{Codec: c, Transport: tb, ReceiveOnly: true, Interval: 20 * time.Millisecond,
		Table: TableConfig{OnEvent: func(e Event) { mu.Lock(); events = append(events, e); mu.Unlock() }}})
	if err != nil {
		t.Fatal(err)
	}
	ctxA, stopA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	doneA, doneB := make(chan error, 1), make(chan error, 1)
	go func() { doneA <- a.Run(ctxA) }()
	go func() { doneB <- b.Run(ctxB) }()
	defer stopB()
	defer stopA()

	if !waitFor(2*time.Second, func() bool { return b.N(time.Now()) == 2 }) {
		t.Fatalf("b never counted a: %+v", b.Table().Counters())
	}
	live := b.Table().Live(time.Now())
	if len(live) != 1 || live[0].Sender != a.ID() || live[0].SRTT != MaxRTT || live[0].Policy != "static" {
		t.Fatalf("b sees %+v (want a's status, clamped)", live)
	}
	if a.N(time.Now()) != 1 {
		t.Fatal("a counted the silent listener")
	}
	time.Sleep(100 * time.Millisecond)
	stopA()
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
	if !waitFor(time.Second, func() bool { return b.N(time.Now()) == 1 }) {
		t.Fatal("goodbye not honoured")
	}
	mu.Lock()
	last := events[len(events)-1]
	mu.Unlock()
	if last.Kind != Leave || last.Why != "goodbye" || last.Peer != a.ID() {
		t.Fatalf("last event %+v", last)
	}
	if sent := a.Counters().Sent; sent < 5 {
		t.Fatalf("a sent %d messages in > 100 ms at 20 ms", sent)
	}
	if b.Counters().Sent != 0 {
		t.Fatal("receive-only node sent")
	}
	if err := a.Run(context.Background()); err == nil {
		t.Fatal("second Run accepted")
	}
	stopB()
	select {
	case err := <-doneB:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("b did not stop")
	}
}

// TestNodeClockSkew: a node whose clock is off by less than the freshness
// window (5 s) is heard and hears its peer, both counting each other in N
// and expiring nothing; off by more, each side rejects the other's
// messages as stale, so neither counts the other.
func TestNodeClockSkew(t *testing.T) {
	for _, tc := range []struct {
		skew  time.Duration
		heard bool
	}{{2 * time.Second, true}, {-2 * time.Second, true}, {10 * time.Second, false}, {-10 * time.Second, false}} {
		t.Run(tc.skew.String(), func(t *testing.T) {
			ta, tb := loopbackPair(t)
			c := NewCodec(testKey, GroupID("skew"))
			st := func() Status { return Status{ActiveFlows: 1, Policy: "static"} }
			a, err := NewNode(NodeConfig{Codec: c, Transport: ta, Interval: 20 * time.Millisecond, Status: st, ClockSkew: tc.skew})
			if err != nil {
				t.Fatal(err)
			}
			b, err := NewNode(NodeConfig{Codec: c, Transport: tb, Interval: 20 * time.Millisecond, Status: st})
			if err != nil {
				t.Fatal(err)
			}
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			for _, n := range []*Node{a, b} {
				go func() { _ = n.Run(ctx) }()
			}
			both := func() bool { return a.N(time.Now()) == 2 && b.N(time.Now()) == 2 }
			if tc.heard {
				if !waitFor(2*time.Second, both) {
					t.Fatalf("skew %v: N %d/%d, want 2/2 (a: %+v, b: %+v)", tc.skew, a.N(time.Now()), b.N(time.Now()),
						a.Table().Counters(), b.Table().Counters())
				}
				// Still heard after several expiry periods: the skewed
				// node's table expires on its own clock.
				time.Sleep(300 * time.Millisecond)
				if !both() || len(a.Live(time.Now())) != 1 || len(b.Live(time.Now())) != 1 {
					t.Fatalf("skew %v: lost each other (N %d/%d)", tc.skew, a.N(time.Now()), b.N(time.Now()))
				}
				return
			}
			stale := func() bool {
				return a.Table().Counters().ByReason[Stale] >= 5 && b.Table().Counters().ByReason[Stale] >= 5
			}
			if !waitFor(2*time.Second, stale) {
				t.Fatalf("skew %v: stale counts a %d, b %d", tc.skew, a.Table().Counters().ByReason[Stale], b.Table().Counters().ByReason[Stale])
			}
			if a.N(time.Now()) != 1 || b.N(time.Now()) != 1 || len(a.Live(time.Now())) != 0 {
				t.Fatalf("skew %v: N %d/%d, want 1/1", tc.skew, a.N(time.Now()), b.N(time.Now()))
			}
		})
	}
}

// Admit hears the source of every authenticated message and of nothing
// else (the admission filter must not learn an address from a forgery).
func TestNodeAdmitsOnlyAuthenticatedSources(t *testing.T) {
	a, _ := loopbackPair(t)
	var admitted []netip.Addr
	n, err := NewNode(NodeConfig{Codec: NewCodec(testKey, GroupID("n")), Transport: a, ReceiveOnly: true,
		Admit: func(x netip.Addr) { admitted = append(admitted, x) }})
	if err != nil {
		t.Fatal(err)
	}
	var wrong Key
	copy(wrong[:], "not the group key, but 32 bytes!")
	honest, forged := netip.MustParseAddrPort("10.0.0.2:51300"), netip.MustParseAddrPort("10.0.0.66:51300")
	encode := func(k Key, sender uint64) []byte {
		m, err := NewCodec(k, GroupID("n")).Encode(Status{Sender: sender, Seq: 1, SentAt: time.Now(), ActiveFlows: 1, Policy: "coop"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	var lastLog time.Time
	n.handle(encode(wrong, 7), forged, &lastLog)
	n.handle([]byte("random bytes"), forged, &lastLog)
	n.handle(encode(testKey, 8), honest, &lastLog)
	n.handle(encode(testKey, 8), honest, &lastLog) // a replay: not OK
	if len(admitted) != 1 || admitted[0] != honest.Addr() {
		t.Fatalf("admitted %v, want only %v", admitted, honest.Addr())
	}
}

// pendingTransport is a Transport that never delivers and reports what
// pending says as queued in its socket (Pender).
type pendingTransport struct{ pending bool }

func (p *pendingTransport) Send([]byte) error { return nil }
func (p *pendingTransport) Receive([]byte) (int, netip.AddrPort, error) {
	return 0, netip.AddrPort{}, net.ErrClosed
}
func (p *pendingTransport) Close() error           { return nil }
func (p *pendingTransport) String() string         { return "pending" }
func (p *pendingTransport) Pending() (bool, error) { return p.pending, nil }

// A receiver that did not run for longer than the expiry (a stopped or
// starved process) judges its peers only once it has read what waited in
// its socket: until its next expiry tick finds nothing unread, N and Live
// count a peer heard before the stall, the backlog's first status is no
// leave and join, and a peer that did go quiet still expires after it; a
// socket that stays full (a flood) defers expiry by at most
// maxExpiryDefer ticks.
func TestNodeJudgesPeersAfterReadingWhatWaited(t *testing.T) {
	c := NewCodec(testKey, GroupID("stall"))
	tr := &pendingTransport{}
	var events []Event
	n, err := NewNode(NodeConfig{Codec: c, Transport: tr, Interval: 300 * time.Millisecond,
		Status: func() Status { return Status{} }, Table: TableConfig{OnEvent: func(e Event) { events = append(events, e) }}})
	if err != nil {
		t.Fatal(err)
	}
	expiry := n.Table().Config().Expiry // 3 missed × 300 ms + 100 ms = 1 s
	t0 := time.Now()
	seq := uint64(0)
	status := func(sent time.Time) Status {
		seq++
		return Status{Sender: 7, Seq: seq, SentAt: sent, ActiveFlows: 1, Policy: "coop"}
	}
	offer := func(at, sent time.Time) {
		t.Helper()
		if r := n.Table().Offer(at, status(sent)); r != OK {
			t.Fatalf("offer at %v: %v", at.Sub(t0), r)
		}
	}
	deferred := 0
	offer(t0, t0)
	n.expireTick(t0, &deferred)

	stalled := t0.Add(expiry + 2*time.Second) // the process ran again
	if got := n.N(stalled); got != 2 {
		t.Errorf("after a stall, before the next expiry tick: N = %d, want 2 (the peer's statuses are unread)", got)
	}
	tr.pending = true
	n.expireTick(stalled, &deferred)
	if got := n.N(stalled); got != 2 || deferred != 1 {
		t.Errorf("an expiry tick with statuses unread: N = %d, deferred %d; want 2 and 1", got, deferred)
	}
	for i := range 6 { // the backlog, sent every 300 ms during the stall
		offer(stalled, t0.Add(time.Duration(i+1)*300*time.Millisecond))
	}
	tr.pending = false
	n.expireTick(stalled.Add(100*time.Millisecond), &deferred)
	if got := n.N(stalled.Add(100 * time.Millisecond)); got != 2 || len(events) != 1 || events[0].Kind != Join {
		t.Errorf("after reading the backlog: N = %d, events %s; want 2 and the one join", got, eventKinds(events))
	}

	quiet := stalled.Add(100*time.Millisecond + expiry + 100*time.Millisecond)
	n.expireTick(quiet, &deferred)
	if got := n.N(quiet); got != 1 || len(events) != 2 || events[1].Kind != Leave || events[1].Why != "expired" {
		t.Errorf("a peer quiet for the expiry: N = %d, events %s; want 1 and its leave (expired)", got, eventKinds(events))
	}

	offer(quiet, quiet) // it comes back; then the socket stays full
	tr.pending = true
	late := quiet.Add(expiry + time.Second)
	for i := range maxExpiryDefer + 1 {
		n.expireTick(late.Add(time.Duration(i)*100*time.Millisecond), &deferred)
	}
	if got := n.N(late.Add(maxExpiryDefer * 100 * time.Millisecond)); got != 1 || deferred != 0 {
		t.Errorf("a full socket for %d ticks: N = %d, deferred %d; want 1 and 0 (expired at the last)", maxExpiryDefer+1, got, deferred)
	}
}

// eventKinds lists events as "join (heard), leave (expired)".
func eventKinds(events []Event) string {
	var b strings.Builder
	for i, e := range events {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%s)", e.Kind, e.Why)
	}
	return b.String()
}

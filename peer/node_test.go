package peer

import (
	"context"
	"net"
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

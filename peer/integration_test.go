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

	"github.com/coopcc/coopcc/internal/nettest"
)

// memberIface returns the name of the interface holding addr in ns.
func memberIface(t *testing.T, ns *nettest.NS, addr string) string {
	t.Helper()
	for _, line := range strings.Split(ns.Exec(t, "ip", "-o", "addr", "show"), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && strings.HasPrefix(f[3], addr+"/") {
			return strings.SplitN(f[1], "@", 2)[0]
		}
	}
	t.Fatalf("no interface with %s in %s", addr, ns.Name)
	return ""
}

type runningNode struct {
	node   *Node
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returned
	err    error         // Run's result, valid after done
	mu     sync.Mutex
	events []Event
}

func (r *runningNode) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
		if r.err != nil {
			t.Errorf("node stopped with %v", r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("node did not stop within 5 s")
	}
}

func (r *runningNode) leaves(why string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e.Kind == Leave && e.Why == why {
			n++
		}
	}
	return n
}

func (r *runningNode) event(kind EventKind, why string) Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e.Kind == kind && e.Why == why {
			return e
		}
	}
	return Event{}
}

func startNode(t *testing.T, ns *nettest.NS, open func() (Transport, error), codec *Codec, noGoodbye bool) *runningNode {
	t.Helper()
	var tr Transport
	if err := ns.Do(func() error {
		var err error
		tr, err = open()
		return err
	}); err != nil {
		t.Fatalf("transport in %s: %v", ns.Name, err)
	}
	r := &runningNode{done: make(chan struct{})}
	node, err := NewNode(NodeConfig{
		Codec: codec, Transport: tr, NoGoodbye: noGoodbye,
		Status: func() Status { return Status{ActiveFlows: 1, Cwnd: 40, SRTT: 20 * time.Millisecond, Policy: "coop"} },
		Table: TableConfig{OnEvent: func(e Event) {
			r.mu.Lock()
			r.events = append(r.events, e)
			r.mu.Unlock()
		}},
	})
	if err != nil {
		tr.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.node, r.cancel = node, cancel
	go func() { r.err = node.Run(ctx); close(r.done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(5 * time.Second):
		}
	})
	return r
}

// waitFor polls cond every 10 ms until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestIntegrationBroadcast4(t *testing.T) {
	t0 := time.Now()
	defer func() { t.Logf("test body took %v", time.Since(t0).Round(time.Millisecond)) }()
	hub := nettest.NewNS(t, "pr-hub")
	a, b, c, d := nettest.NewNS(t, "pr-a"), nettest.NewNS(t, "pr-b"), nettest.NewNS(t, "pr-c"), nettest.NewNS(t, "pr-d")
	addrs := nettest.Bridge(t, hub, "10.77.41", a, b, c, d)
	const port = DefaultPort
	group := GroupID("integration")
	good := NewCodec(Key{0x11, 0x22}, group)
	wrong := NewCodec(Key{0x99}, group)
	open := func(ns *nettest.NS, addr string) func() (Transport, error) {
		iface := memberIface(t, ns, addr)
		return func() (Transport, error) { return ListenBroadcast4(iface, port) }
	}

	// A passive listener on the hub's bridge captures a real message for the replay.
	var capture *net.UDPConn
	if err := hub.Do(func() error {
		var err error
		capture, err = net.ListenUDP("udp4", &net.UDPAddr{Port: port})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer capture.Close()

	start := time.Now()
	t.Logf("namespaces ready after %v", start.Sub(t0).Round(time.Millisecond))
	na := startNode(t, a, open(a, addrs[0]), good, false)
	nb := startNode(t, b, open(b, addrs[1]), good, false)
	nc := startNode(t, c, open(c, addrs[2]), good, true) // c will "crash": no goodbye
	nd := startNode(t, d, open(d, addrs[3]), wrong, false)
	nodes := []*runningNode{na, nb, nc}

	// Each of the three learns N = 3 within 1 s.
	if !waitFor(time.Second, func() bool {
		now := time.Now()
		return na.node.N(now) == 3 && nb.node.N(now) == 3 && nc.node.N(now) == 3
	}) {
		now := time.Now()
		t.Fatalf("N after 1 s: a=%d b=%d c=%d (want 3 each)", na.node.N(now), nb.node.N(now), nc.node.N(now))
	}
	t.Logf("N = 3 everywhere after %v", time.Since(start).Round(time.Millisecond))

	// The wrong-key node is not counted and shows up under "bad MAC".
	if !waitFor(2*time.Second, func() bool {
		for _, r := range nodes {
			if r.node.Table().Counters().ByReason[BadMAC] == 0 {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("bad MAC counters: %d %d %d", na.node.Table().Counters().ByReason[BadMAC],
			nb.node.Table().Counters().ByReason[BadMAC], nc.node.Table().Counters().ByReason[BadMAC])
	}
	for i, r := range nodes {
		if n := r.node.N(time.Now()); n != 3 {
			t.Fatalf("node %d counts N = %d with the wrong-key node present", i, n)
		}
	}
	if n := nd.node.N(time.Now()); n != 1 {
		t.Fatalf("wrong-key node counts N = %d, want 1 (itself)", n)
	}

	// Replay: capture a message of node a and send the same bytes again.
	buf := make([]byte, 1024)
	var captured []byte
	_ = capture.SetReadDeadline(time.Now().Add(3 * time.Second))
	for captured == nil {
		k, _, err := capture.ReadFromUDPAddrPort(buf)
		if err != nil {
			t.Fatalf("capture: %v", err)
		}
		if s, err := good.Decode(buf[:k]); err == nil && s.Sender == na.node.ID() {
			captured = append([]byte(nil), buf[:k]...)
		}
	}
	// The replay comes from the hub's address, not from a's: the receivers
	// reject it before the sequence check, as a spoofed source.
	replaysBefore := nb.node.Table().Counters().ByReason[Spoofed]
	dst := netip.MustParseAddrPort(fmt.Sprintf("10.77.41.255:%d", port))
	if err := hub.Do(func() error {
		raw, err := net.ListenUDP("udp4", &net.UDPAddr{})
		if err != nil {
			return err
		}
		defer raw.Close()
		rc, err := raw.SyscallConn()
		if err != nil {
			return err
		}
		if err := rc.Control(func(fd uintptr) { setBroadcast(fd) }); err != nil {
			return err
		}
		_, err = raw.WriteToUDPAddrPort(captured, dst)
		return err
	}); err != nil {
		t.Fatalf("replay send: %v", err)
	}
	if !waitFor(2*time.Second, func() bool {
		return nb.node.Table().Counters().ByReason[Spoofed] > replaysBefore &&
			nc.node.Table().Counters().ByReason[Spoofed] > 0
	}) {
		t.Fatalf("message replayed from another address not rejected as spoofed: b=%v c=%v",
			nb.node.Table().Counters().ByReason, nc.node.Table().Counters().ByReason)
	}

	// c stops without goodbye: a and b drop it after the expiry (1 s).
	expiry := na.node.Table().Config().Expiry
	nc.stop(t)
	stopped := time.Now()
	if !waitFor(expiry+time.Second, func() bool {
		now := time.Now()
		return na.node.N(now) == 2 && nb.node.N(now) == 2
	}) {
		t.Fatalf("crashed peer still counted %v after it stopped (expiry %v)", time.Since(stopped), expiry)
	}
	gone := time.Since(stopped)
	if !waitFor(time.Second, func() bool { return na.leaves("expired") == 1 && nb.leaves("expired") == 1 }) {
		t.Fatalf("no expired leave event: a=%d b=%d", na.leaves("expired"), nb.leaves("expired"))
	}
	// The leave comes one expiry after c's last message (same clock here),
	// give or take the expiry scan period (interval/3) and scheduling.
	for _, r := range []*runningNode{na, nb} {
		e := r.event(Leave, "expired")
		silent := e.At.Sub(e.Status.SentAt)
		if silent < expiry || silent > expiry+500*time.Millisecond {
			t.Fatalf("peer dropped %v after its last message, want expiry %v (+ < 500 ms)", silent, expiry)
		}
	}
	t.Logf("stopped peer dropped after %v (expiry %v)", gone.Round(time.Millisecond), expiry)

	// b stops cleanly: its goodbye removes it from a at once.
	nb.stop(t)
	if !waitFor(200*time.Millisecond, func() bool { return na.node.N(time.Now()) == 1 && na.leaves("goodbye") == 1 }) {
		t.Fatalf("goodbye not honoured: N=%d leaves(goodbye)=%d", na.node.N(time.Now()), na.leaves("goodbye"))
	}
	ca := na.node.Table().Counters()
	t.Logf("a's counters: %v joins=%d leaves=%d sent=%d", ca.ByReason, ca.Joins, ca.Leaves, na.node.Counters().Sent)
	if ca.ByReason[Self] == 0 {
		t.Error("own broadcasts never looped back as Self (the self filter went untested)")
	}
}

func TestIntegrationMulticast6(t *testing.T) {
	hub := nettest.NewNS(t, "pr6-hub")
	a, b := nettest.NewNS(t, "pr6-a"), nettest.NewNS(t, "pr6-b")
	for _, ns := range []*nettest.NS{hub, a, b} {
		ns.Sysctl(t, "net.ipv6.conf.default.accept_dad", "0")
		ns.Sysctl(t, "net.ipv6.conf.all.accept_dad", "0")
	}
	addrs := nettest.Bridge(t, hub, "10.77.42", a, b)
	codec := NewCodec(Key{0x42}, GroupID("v6"))
	open := func(ns *nettest.NS, addr string) func() (Transport, error) {
		iface := memberIface(t, ns, addr)
		return func() (Transport, error) { return ListenMulticast6(iface, DefaultPort, netip.Addr{}) }
	}
	na := startNode(t, a, open(a, addrs[0]), codec, false)
	nb := startNode(t, b, open(b, addrs[1]), codec, false)
	if !waitFor(2*time.Second, func() bool {
		now := time.Now()
		return na.node.N(now) == 2 && nb.node.N(now) == 2
	}) {
		t.Fatalf("IPv6 multicast: N a=%d b=%d, counters a=%v sent=%+v", na.node.N(time.Now()), nb.node.N(time.Now()),
			na.node.Table().Counters().ByReason, na.node.Counters())
	}
}

func TestBroadcast4FollowsAddressChange(t *testing.T) {
	a, b := nettest.NewNS(t, "pr-ra"), nettest.NewNS(t, "pr-rb")
	la, _ := nettest.Veth(t, a, "10.77.44.1/24", b, "10.77.44.2/24")
	var tr *UDPTransport
	if err := a.Do(func() error {
		var err error
		tr, err = ListenBroadcast4(la.Dev, DefaultPort)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if got := tr.Destination().String(); got != "10.77.44.255:51300" {
		t.Fatalf("destination %s", got)
	}
	a.Exec(t, "ip", "addr", "flush", "dev", la.Dev)
	a.Exec(t, "ip", "addr", "add", "10.77.46.1/23", "dev", la.Dev)
	if got := tr.refreshDst().String(); got != "10.77.47.255:51300" {
		t.Fatalf("destination after the address changed: %s", got)
	}
	if err := tr.Send([]byte("x")); err != nil {
		t.Fatal(err)
	}
}

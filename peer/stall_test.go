package peer

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coopcc/coopcc/internal/nettest"
)

// stallChildEnv names the interface the child of
// TestStalledReceiverKeepsItsPeer listens on.
const stallChildEnv = "COOPCC_PEER_STALL_CHILD"

// stallInterval is both nodes' status interval: an expiry of 6 × 100 ms +
// 33 ms.
const stallInterval = 100 * time.Millisecond

// A receiver whose process is stopped (SIGSTOP) for longer than the expiry
// while its peer keeps sending — what a loaded machine does to an agent —
// reads the statuses that waited in its socket when it runs again: no
// leave and join of the peer, N never 1; the peer's real silence is still
// seen. The node runs in a child process (the test binary again) in one
// namespace, the peer in this process in another, on a bridge; the child
// prints its N every 10 ms and every event. Before Node.at and the
// table's two clocks the child printed a leave (expired) and a join at
// every resume.
func TestStalledReceiverKeepsItsPeer(t *testing.T) {
	if iface := os.Getenv(stallChildEnv); iface != "" {
		runStallChild(iface)
		return
	}
	nettest.RequireRoot(t)
	nettest.RequireSelfExec(t)
	hub := nettest.NewNS(t, "ps-hub")
	a, b := nettest.NewNS(t, "ps-a"), nettest.NewNS(t, "ps-b")
	addrs := nettest.Bridge(t, hub, "10.77.43", a, b)
	codec := NewCodec(Key{0x5a}, GroupID("stall"))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	child := a.Command(ctx, os.Args[0], "-test.run=^TestStalledReceiverKeepsItsPeer$", "-test.count=1")
	child.Env = append(os.Environ(), stallChildEnv+"="+memberIface(t, a, addrs[0]))
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	var (
		mu    sync.Mutex
		lines []string
	)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
		}
	}()
	seen := func(from int, want string) int { // the index of the first line from from that is want, or -1
		mu.Lock()
		defer mu.Unlock()
		for i := from; i < len(lines); i++ {
			if lines[i] == want {
				return i
			}
		}
		return -1
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(lines) }

	var tr Transport
	iface := memberIface(t, b, addrs[1])
	if err := b.Do(func() (err error) { tr, err = ListenBroadcast4(iface, DefaultPort); return err }); err != nil {
		t.Fatal(err)
	}
	sender, err := NewNode(NodeConfig{Codec: codec, Transport: tr, Interval: stallInterval, NoGoodbye: true,
		Status: func() Status { return Status{ActiveFlows: 1, Policy: "coop"} }})
	if err != nil {
		tr.Close()
		t.Fatal(err)
	}
	sctx, stopSender := context.WithCancel(ctx)
	sent := make(chan struct{})
	go func() { _ = sender.Run(sctx); close(sent) }()
	defer func() { stopSender(); <-sent }()

	if !waitFor(5*time.Second, func() bool { return seen(0, "N 2") >= 0 }) {
		t.Fatalf("the child never counted its peer: %v", lines)
	}
	joined := seen(0, "N 2")
	pid := child.Process.Pid
	for range 3 {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(6*stallInterval + stallInterval/3 + 400*time.Millisecond) // the expiry and more
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	for _, bad := range []string{"N 1", "leave expired"} {
		if i := seen(joined, bad); i >= 0 {
			t.Errorf("after stalls of the receiver: %q (line %d of %d after it counted its peer)", bad, i-joined, count()-joined)
		}
	}

	before := count()
	stopSender() // no goodbye: the peer falls silent
	<-sent
	if !waitFor(3*time.Second, func() bool { return seen(before, "leave expired") >= 0 && seen(before, "N 1") >= 0 }) {
		t.Errorf("a silent peer was not expired: %v", lines[before:])
	}
}

// runStallChild is the child of TestStalledReceiverKeepsItsPeer: a node on
// iface that prints "N <n>" every 10 ms and "<kind> <why>" for each event,
// until killed.
func runStallChild(iface string) {
	fail := func(err error) { fmt.Fprintln(os.Stderr, "stall child:", err); os.Exit(1) }
	tr, err := ListenBroadcast4(iface, DefaultPort)
	if err != nil {
		fail(err)
	}
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	print := func(s string) { mu.Lock(); fmt.Fprintln(w, s); w.Flush(); mu.Unlock() }
	n, err := NewNode(NodeConfig{Codec: NewCodec(Key{0x5a}, GroupID("stall")), Transport: tr, Interval: stallInterval,
		Status: func() Status { return Status{ActiveFlows: 1, Policy: "coop"} },
		Table:  TableConfig{OnEvent: func(e Event) { print(strings.ToLower(fmt.Sprintf("%s %s", e.Kind, e.Why))) }}})
	if err != nil {
		fail(err)
	}
	go func() {
		for {
			print(fmt.Sprintf("N %d", n.N(time.Now())))
			time.Sleep(10 * time.Millisecond)
		}
	}()
	if err := n.Run(context.Background()); err != nil {
		fail(err)
	}
}

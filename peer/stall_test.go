package peer

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
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

// stallMissed is the missed intervals both nodes expire a peer after: the
// agent's default (6 × 0.3 s + 0.1 s = 1.9 s), which a loaded machine's
// scheduling delays of this process's sender stay well inside.
const stallMissed = 6

// stallLine is one line the child printed: the host's time it printed it
// at and what ("N 2", "leave expired").
type stallLine struct {
	at   time.Time
	text string
}

// A receiver whose process is stopped (SIGSTOP) for longer than the expiry
// while its peer keeps sending — what a loaded machine does to an agent —
// reads the statuses that waited in its socket when it runs again: in the
// half second after each resume, no leave of the peer and N never 1; the
// peer's real silence is still seen after it. The node runs in a child
// process (the test binary again) in one namespace, the peer in this
// process in another, on a bridge, both with the agent's expiry
// (stallMissed); the child prints its N every 10 ms and every event, each
// with the time. Only the resumes are judged: on a loaded machine (a CI
// run beside the lab's emulator) this process's own sender may fall quiet
// for an expiry at other times. Before Node.at and the table's two clocks
// the child counted N = 1 and printed a leave (expired) and a join at every
// resume.
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
		lines []stallLine
	)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			ns, text, ok := strings.Cut(sc.Text(), " ")
			at, err := strconv.ParseInt(ns, 10, 64)
			if !ok || err != nil {
				continue
			}
			mu.Lock()
			lines = append(lines, stallLine{time.Unix(0, at), text})
			mu.Unlock()
		}
	}()
	// seen returns the first line printed in [from, to) that is want.
	seen := func(from, to time.Time, want string) (stallLine, bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range lines {
			if l.text == want && !l.at.Before(from) && l.at.Before(to) {
				return l, true
			}
		}
		return stallLine{}, false
	}
	forever := time.Now().Add(time.Hour)

	var tr Transport
	iface := memberIface(t, b, addrs[1])
	if err := b.Do(func() (err error) { tr, err = ListenBroadcast4(iface, DefaultPort); return err }); err != nil {
		t.Fatal(err)
	}
	sender, err := NewNode(NodeConfig{Codec: codec, Transport: tr, NoGoodbye: true, Missed: stallMissed,
		Status: func() Status { return Status{ActiveFlows: 1, Policy: "coop"} }})
	if err != nil {
		tr.Close()
		t.Fatal(err)
	}
	expiry := sender.Table().Config().Expiry
	sctx, stopSender := context.WithCancel(ctx)
	sent := make(chan struct{})
	go func() { _ = sender.Run(sctx); close(sent) }()
	defer func() { stopSender(); <-sent }()

	start := time.Now()
	if !waitFor(5*time.Second, func() bool { _, ok := seen(start, forever, "N 2"); return ok }) {
		t.Fatal("the child never counted its peer")
	}
	pid := child.Process.Pid
	for range 2 {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(expiry + 400*time.Millisecond)
		resumed := time.Now()
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		for _, bad := range []string{"N 1", "leave expired"} {
			if l, ok := seen(resumed, resumed.Add(500*time.Millisecond), bad); ok {
				t.Errorf("%v after a stall of %v: %q", l.at.Sub(resumed).Round(time.Millisecond), expiry+400*time.Millisecond, bad)
			}
		}
	}

	silent := time.Now()
	stopSender() // no goodbye: the peer falls silent
	<-sent
	if !waitFor(expiry+2*time.Second, func() bool {
		_, left := seen(silent, forever, "leave expired")
		_, alone := seen(silent, forever, "N 1")
		return left && alone
	}) {
		t.Errorf("a peer silent for %v was not expired", expiry+2*time.Second)
	}
}

// runStallChild is the child of TestStalledReceiverKeepsItsPeer: a node on
// iface that prints "<unix ns> N <n>" every 10 ms and "<unix ns> <kind>
// <why>" for each event, until killed.
func runStallChild(iface string) {
	fail := func(err error) { fmt.Fprintln(os.Stderr, "stall child:", err); os.Exit(1) }
	tr, err := ListenBroadcast4(iface, DefaultPort)
	if err != nil {
		fail(err)
	}
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	print := func(s string) {
		mu.Lock()
		fmt.Fprintln(w, time.Now().UnixNano(), s)
		w.Flush()
		mu.Unlock()
	}
	n, err := NewNode(NodeConfig{Codec: NewCodec(Key{0x5a}, GroupID("stall")), Transport: tr, Missed: stallMissed,
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

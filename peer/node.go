package peer

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultJitter is the send interval's jitter: each gap is drawn uniformly
// from interval × [1 − j, 1 + j], so that terminals started together do not
// stay in lock step (and collide on the air).
const DefaultJitter = 0.1

// NodeConfig configures a Node. Codec, Transport and Status are required.
type NodeConfig struct {
	Codec     *Codec
	Transport Transport // the Node closes it when Run returns
	// Status returns this terminal's current status; the Node fills in
	// Sender, Seq and SentAt and clamps the rest into range.
	Status   func() Status
	Interval time.Duration // send interval; default 300 ms
	Jitter   float64       // fraction of Interval; default 0.1, negative = none
	Missed   int           // intervals a peer may miss; default 3
	// Table configures the peer table. Self is set to the node's id; a zero
	// Expiry becomes Missed × Interval + Interval/3 (1 s by default) and a
	// zero Rate max(10, 3/Interval) messages/s (peers are assumed to use
	// the same interval).
	Table TableConfig
	// NoGoodbye skips the goodbye message on shutdown (peers then drop
	// this node only after the expiry, as after a crash).
	NoGoodbye bool
	// ReceiveOnly makes a silent listener (debugging): nothing is sent and
	// Status may be nil.
	ReceiveOnly bool
	// ClockSkew shifts the node's wall clock (a test hook, the lab's
	// clock_skew fault): messages are stamped and the freshness window is
	// checked with time.Now() + ClockSkew, as on a terminal whose clock is
	// that far off. CLOCK_REALTIME is not per network namespace, so a lab
	// terminal's clock cannot be skewed otherwise. Node.Live and Node.N
	// take the host's time and apply the skew themselves.
	ClockSkew time.Duration
	// Admit, if set, is told the source address of every message that
	// passed authentication (an admission filter's Filter.Admit: see
	// package peer/admit).
	Admit  func(netip.Addr)
	Logger *slog.Logger // default: discard
}

// NodeCounters are the sending side's counts.
type NodeCounters struct {
	Sent         uint64 // messages handed to the transport
	SendErrors   uint64 // transport failures
	EncodeErrors uint64 // own statuses that did not encode
	ReadErrors   uint64 // transport receive failures (not datagrams)
}

// Node runs the protocol on one transport: a send loop every interval and a
// receive loop feeding a Table.
type Node struct {
	cfg   NodeConfig
	id    uint64
	table *Table
	seq   atomic.Uint64
	log   *slog.Logger

	sent, sendErrs, encErrs, readErrs atomic.Uint64
	started                           atomic.Bool
	// listened is the node's clock (UnixNano) at its last expiry tick that
	// found no status unread (expireTick), or at the start of Run; 0 = not
	// running. handling: the receive loop is handing datagrams to the
	// table.
	listened atomic.Int64
	handling atomic.Bool
}

// NewSenderID returns a random non-zero 64-bit sender id.
func NewSenderID() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux ≥ 3.17
		if id := binary.BigEndian.Uint64(b[:]); id != 0 {
			return id
		}
	}
}

// NewNode checks the configuration and returns a node with a fresh random
// sender id.
func NewNode(cfg NodeConfig) (*Node, error) {
	switch {
	case cfg.Codec == nil:
		return nil, errors.New("peer node: no codec (key and group)")
	case cfg.Transport == nil:
		return nil, errors.New("peer node: no transport")
	case cfg.Status == nil && !cfg.ReceiveOnly:
		return nil, errors.New("peer node: no status function")
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Interval < 10*time.Millisecond || cfg.Interval > time.Minute {
		return nil, fmt.Errorf("peer node: interval %v outside [10ms, 1m]", cfg.Interval)
	}
	if cfg.Jitter == 0 {
		cfg.Jitter = DefaultJitter
	}
	if cfg.Jitter < 0 {
		cfg.Jitter = 0
	}
	if cfg.Jitter > 0.5 {
		return nil, fmt.Errorf("peer node: jitter %.2f > 0.5 of the interval", cfg.Jitter)
	}
	if cfg.Missed <= 0 {
		cfg.Missed = DefaultMissed
	}
	if cfg.Table.Expiry == 0 {
		cfg.Table.Expiry = time.Duration(cfg.Missed)*cfg.Interval + cfg.Interval/3
	}
	if cfg.Table.Rate == 0 { // 3× the nominal rate of a peer using the same interval
		cfg.Table.Rate = max(DefaultRate, 3/cfg.Interval.Seconds())
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	n := &Node{cfg: cfg, id: NewSenderID(), log: cfg.Logger}
	cfg.Table.Self = n.id
	n.table = NewTable(cfg.Codec, cfg.Table)
	n.cfg = cfg
	return n, nil
}

// ID returns the node's sender id.
func (n *Node) ID() uint64 { return n.id }

// Table returns the node's peer table.
func (n *Node) Table() *Table { return n.table }

// N returns the table's count of active terminals at now (the host's time;
// self included), judged at the node's listening time (at).
func (n *Node) N(now time.Time) int { return n.table.N(n.at(now)) }

// Live returns the live peers at now (the host's time), as Table.Live on the
// node's own clock at its listening time (at).
func (n *Node) Live(now time.Time) []Status { return n.table.Live(n.at(now)) }

// at is the time on the node's own clock at which peers are judged live at
// the host's time now: now, but no later than two expiry ticks after the
// last one that found nothing unread (expireTick). A receiver that did not
// run for a while (its process stopped, or starved of a CPU) has not read
// what its peers sent meanwhile: their statuses wait in its socket, and
// must be read before the peers count as quiet. Without it, `coopcc peer
// listen` stopped for 2.5 s (SIGSTOP) reported its one peer expired and
// joined again in the same millisecond at every resume, 10 of 10; an agent
// that ticked in between counted N = 1.
func (n *Node) at(now time.Time) time.Time {
	now = now.Add(n.cfg.ClockSkew)
	l := n.listened.Load()
	if l == 0 {
		return now
	}
	if lim := time.Unix(0, l).Add(2 * n.expiryTick()); now.After(lim) {
		return lim
	}
	return now
}

// expiryTick is how often Run expires peers.
func (n *Node) expiryTick() time.Duration { return max(n.cfg.Interval/3, 10*time.Millisecond) }

// maxExpiryDefer is how many expiry ticks in a row may pass without
// expiring while statuses wait unread: a receiver that resumes after a
// stall reads them within one, and a flood that keeps the socket full
// delays expiry (and at) by at most this many ticks.
const maxExpiryDefer = 3

// expireTick expires the peers not heard within the table's expiry at now
// (the node's clock), unless statuses may wait unread — being handed to the
// table, or queued in the socket (Pender) — and fewer than maxExpiryDefer
// ticks in a row have passed so; deferred counts them.
func (n *Node) expireTick(now time.Time, deferred *int) {
	if *deferred < maxExpiryDefer && n.unread() {
		*deferred++
		return
	}
	*deferred = 0
	n.listened.Store(now.UnixNano())
	n.table.Expire(now)
}

// unread reports whether a received datagram may not be in the table yet.
func (n *Node) unread() bool {
	if n.handling.Load() {
		return true
	}
	p, ok := n.cfg.Transport.(Pender)
	if !ok {
		return false
	}
	pending, err := p.Pending()
	return err == nil && pending
}

// now is the node's wall clock: the host's, shifted by ClockSkew.
func (n *Node) now() time.Time { return time.Now().Add(n.cfg.ClockSkew) }

// Counters returns the sending side's counts (the table has the receiving
// side's).
func (n *Node) Counters() NodeCounters {
	return NodeCounters{Sent: n.sent.Load(), SendErrors: n.sendErrs.Load(), EncodeErrors: n.encErrs.Load(), ReadErrors: n.readErrs.Load()}
}

// Run sends the node's status at once and then every interval (± jitter),
// receives peers' messages into the table and expires peers, until ctx is
// done; then it sends a goodbye (unless NoGoodbye), closes the transport and
// returns nil. It returns an error only if the receive loop fails for a
// reason other than the shutdown. Run may be called once.
func (n *Node) Run(ctx context.Context) error {
	if !n.started.CompareAndSwap(false, true) {
		return errors.New("peer node: Run called twice")
	}
	var wg sync.WaitGroup
	recvErr := make(chan error, 1)
	var closing atomic.Bool
	wg.Add(1)
	go func() {
		defer wg.Done()
		recvErr <- n.receiveLoop(&closing)
	}()

	n.send(false)
	sendTimer := time.NewTimer(n.nextGap())
	if n.cfg.ReceiveOnly {
		sendTimer.Stop()
	}
	expiry := time.NewTicker(n.expiryTick())
	defer sendTimer.Stop()
	defer expiry.Stop()
	n.listened.Store(n.now().UnixNano()) // listening from now on (at)
	defer n.listened.Store(0)            // stopped: liveness on the host's clock again
	var err error
	deferred := 0
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err = <-recvErr:
			break loop
		case <-sendTimer.C:
			n.send(false)
			sendTimer.Reset(n.nextGap())
		case now := <-expiry.C:
			n.expireTick(now.Add(n.cfg.ClockSkew), &deferred)
		}
	}
	if !n.cfg.NoGoodbye {
		n.send(true)
	}
	closing.Store(true)
	_ = n.cfg.Transport.Close()
	wg.Wait()
	if err != nil {
		return fmt.Errorf("peer node on %v: %w", n.cfg.Transport, err)
	}
	return nil
}

func (n *Node) nextGap() time.Duration {
	j := n.cfg.Jitter
	f := 1 - j + 2*j*mrand.Float64()
	return time.Duration(float64(n.cfg.Interval) * f)
}

func (n *Node) send(leaving bool) {
	if n.cfg.ReceiveOnly {
		return
	}
	s := n.cfg.Status().Clamp()
	s.Sender = n.id
	s.Seq = n.seq.Add(1)
	s.SentAt = n.now()
	s.Leaving = leaving
	var buf [MaxMessageSize]byte
	msg, err := n.cfg.Codec.AppendEncode(buf[:0], s)
	if err != nil {
		n.encErrs.Add(1)
		n.log.Warn("peer: own status does not encode", "err", err)
		return
	}
	if err := n.cfg.Transport.Send(msg); err != nil {
		if n.sendErrs.Add(1)%100 == 1 { // the first failure, then every 100th (30 s at 0.3 s)
			n.log.Warn("peer: send failed", "transport", n.cfg.Transport.String(), "err", err, "failures", n.sendErrs.Load())
		}
		return
	}
	n.sent.Add(1)
}

// Flood pacing: when more than floodRate datagrams/s arrive (honest
// traffic is 3.3/s per peer: 330/s for 100 peers), the receiver sleeps
// floodPause after each drain, so that one wake-up reads the ≈ 200
// datagrams that queued meanwhile at 10,000/s (recvmmsg, 64 per call)
// instead of one wake-up per datagram. Status messages then wait at most
// floodPause (20 ms of a 300 ms interval) longer; the socket's 1 MB buffer
// holds 20 ms of a flood of ≈ 50,000 datagrams/s. The rate is below the
// admission filter's budget for unknown sources (peer/admit: 1,000/s, in
// bursts of 100 at the start of each 100 ms), so what a filtered flood
// still lets through is read in a few wake-ups, not one per datagram.
const (
	floodRate  = 500
	floodPause = 20 * time.Millisecond
	floodSpan  = 100 * time.Millisecond
)

// floodMeter counts datagrams per floodSpan.
type floodMeter struct {
	start      time.Time
	count      int
	lastWindow int
}

// note adds k datagrams received at now and reports whether the rate of
// this or the previous span is above floodRate.
func (f *floodMeter) note(now time.Time, k int) bool {
	if now.Sub(f.start) >= floodSpan {
		f.lastWindow = f.count
		if now.Sub(f.start) >= 2*floodSpan {
			f.lastWindow = 0
		}
		f.start, f.count = now, 0
	}
	f.count += k
	limit := int(floodRate * floodSpan.Seconds())
	return f.count > limit || f.lastWindow > limit
}

// handle offers one datagram to the table (and logs a rejection at most
// once a second).
func (n *Node) handle(msg []byte, from netip.AddrPort, lastLog *time.Time) {
	now := n.now()
	s, r := n.table.ReceiveFrom(now, from.Addr().Unmap(), msg)
	if r == OK && n.cfg.Admit != nil {
		n.cfg.Admit(from.Addr())
	}
	if r != OK && r != Self && now.Sub(*lastLog) > time.Second { // at most one line a second
		*lastLog = now
		n.log.Debug("peer: message rejected", "from", from, "reason", r.String(), "sender", s.Sender)
	}
}

// drainLoop is receiveLoop for a Drainer, with flood pacing.
func (n *Node) drainLoop(d Drainer, closing *atomic.Bool) error {
	var (
		lastLog time.Time
		meter   floodMeter
	)
	fn := func(msg []byte, from netip.AddrPort) {
		n.handling.Store(true)
		n.handle(msg, from, &lastLog)
	}
	consecutive := 0
	for {
		k, err := d.Drain(fn)
		n.handling.Store(false)
		if err != nil {
			if stop, err := n.readFailed(err, closing, &consecutive); stop {
				return err
			}
			continue
		}
		consecutive = 0
		if meter.note(time.Now(), k) {
			time.Sleep(floodPause)
		}
	}
}

// readFailed handles a failed read of a receive loop: stop (with no error)
// when the node is closing, stop with the error after more than 100
// failures in a row, otherwise count it and pause before the next read.
func (n *Node) readFailed(err error, closing *atomic.Bool, consecutive *int) (stop bool, _ error) {
	if closing.Load() || errors.Is(err, net.ErrClosed) {
		return true, nil
	}
	n.readErrs.Add(1)
	if *consecutive++; *consecutive > 100 {
		return true, fmt.Errorf("receive: %w", err)
	}
	time.Sleep(10 * time.Millisecond)
	return false, nil
}

func (n *Node) receiveLoop(closing *atomic.Bool) error {
	if d, ok := n.cfg.Transport.(Drainer); ok {
		return n.drainLoop(d, closing)
	}
	buf := make([]byte, MaxMessageSize+1) // one more, so Decode sees oversize
	var lastLog time.Time
	consecutive := 0
	for {
		k, from, err := n.cfg.Transport.Receive(buf)
		if err != nil {
			if stop, err := n.readFailed(err, closing, &consecutive); stop {
				return err
			}
			continue
		}
		consecutive = 0
		n.handling.Store(true)
		n.handle(buf[:k], from, &lastLog)
		n.handling.Store(false)
	}
}

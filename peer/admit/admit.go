// Package admit is the kernel-side admission filter of the peer socket: an
// eBPF socket filter (bpf/peer_admit.c) that queues every datagram from a
// source the agent authenticated recently and, from any other source, at
// most a fixed budget per second, dropping the rest before the agent reads
// them.
//
// A flood of well-formed datagrams with a wrong key passes every cheap
// check and costs the agent a copy and an HMAC each; dropped in the
// kernel's receive path it costs the agent nothing. Sources become known
// only through Admit, which the peer node calls after a message from them
// passed authentication, so a flood cannot buy its way in, and a peer
// already heard is never dropped: a flood can delay a new peer's joining
// (its first message must win a place in the budget), not silence one.
// docs/protocol.md §8 describes the attack and this answer.
//
// The filter lives as long as the socket: closing the socket frees it, so a
// crashed agent leaves nothing behind.
package admit

import (
	"fmt"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"github.com/coopcc/coopcc/internal/ktime"
)

// Config sets the filter's budget for unknown sources.
type Config struct {
	// UnknownRate is how many datagrams per second from sources not yet
	// authenticated are let through, all such sources together. Default
	// DefaultUnknownRate.
	UnknownRate int
	// Window is the period over which the budget is counted (UnknownRate
	// × Window datagrams per window). Default 100 ms.
	Window time.Duration
	// TTL is how long a source stays known after its last authenticated
	// message. Default 30 s (far above a peer's expiry).
	TTL time.Duration
}

// DefaultUnknownRate admits 1,000 unknown datagrams/s: against a flood of
// 10,000/s a joining peer's message gets through with probability ≈ 0.1,
// so at 3.3 messages/s it joins within a few seconds, and the flood costs
// the agent ≈ 1,000 × 2 µs = 0.2 % of a core.
const DefaultUnknownRate = 1000

func (c Config) withDefaults() (Config, error) {
	if c.UnknownRate == 0 {
		c.UnknownRate = DefaultUnknownRate
	}
	if c.Window == 0 {
		c.Window = 100 * time.Millisecond
	}
	if c.TTL == 0 {
		c.TTL = 30 * time.Second
	}
	if c.UnknownRate < 0 || c.Window < time.Millisecond || c.TTL <= 0 {
		return c, fmt.Errorf("admission filter: unknown rate %d/s, window %v, ttl %v: need rate ≥ 0, window ≥ 1 ms, ttl > 0",
			c.UnknownRate, c.Window, c.TTL)
	}
	return c, nil
}

// state mirrors struct admit_state of bpf/peer_admit.c.
type state struct {
	WindowNs     uint64
	UnknownLimit uint64
	WindowStart  uint64
	Used         uint64
	Dropped      uint64
}

// Filter is an admission filter attached to one socket.
type Filter struct {
	objs admitObjects
	ttl  time.Duration
}

// Attach loads the filter and attaches it to the UDP socket fd
// (SO_ATTACH_BPF). It needs BPF privileges (root, or CAP_BPF with
// unprivileged BPF disabled); callers treat a failure as "no filter" and
// read every datagram as before.
func Attach(fd int, cfg Config) (*Filter, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	f := &Filter{ttl: cfg.TTL}
	if err := loadAdmitObjects(&f.objs, nil); err != nil {
		return nil, fmt.Errorf("admission filter: load: %w", err)
	}
	limit := uint64(float64(cfg.UnknownRate) * cfg.Window.Seconds())
	st := state{WindowNs: uint64(cfg.Window.Nanoseconds()), UnknownLimit: limit}
	if err := f.objs.CoopccAdmit.Put(uint32(0), st); err != nil {
		_ = f.objs.Close()
		return nil, fmt.Errorf("admission filter: configure: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ATTACH_BPF, f.objs.CoopccPeerAdmit.FD()); err != nil {
		_ = f.objs.Close()
		return nil, fmt.Errorf("admission filter: SO_ATTACH_BPF: %w", err)
	}
	return f, nil
}

// Admit marks a as known until TTL from now: every datagram from it is
// queued. Call it for the source of each authenticated message.
func (f *Filter) Admit(a netip.Addr) error {
	until, err := ktime.Now()
	if err != nil {
		return fmt.Errorf("admission filter: %w", err)
	}
	until += uint64(f.ttl.Nanoseconds())
	if err := f.objs.CoopccKnown.Put(key(a), until); err != nil {
		return fmt.Errorf("admission filter: admit %v: %w", a, err)
	}
	return nil
}

// Known reports whether a is known now.
func (f *Filter) Known(a netip.Addr) bool {
	var until uint64
	if err := f.objs.CoopccKnown.Lookup(key(a), &until); err != nil {
		return false
	}
	now, err := ktime.Now()
	return err == nil && until > now
}

// Dropped returns how many datagrams the filter dropped since it was
// attached.
func (f *Filter) Dropped() (uint64, error) {
	var st state
	if err := f.objs.CoopccAdmit.Lookup(uint32(0), &st); err != nil {
		return 0, fmt.Errorf("admission filter: read state: %w", err)
	}
	return st.Dropped, nil
}

// Close releases this process's references to the program and maps. The
// socket keeps the filter as long as it lives (it is not detached: the
// descriptor number may belong to another socket by now); closing the
// socket frees it.
func (f *Filter) Close() error {
	return f.objs.Close()
}

// key is the filter's map key of a: 16 bytes, IPv4 as ::ffff:a.b.c.d, no
// zone (bpf/peer_admit.c reads the packet's source address so).
func key(a netip.Addr) [16]byte { return a.Unmap().WithZone("").As16() }

// Package datapath enforces congestion-window bounds on the kernel's own
// CUBIC from outside, with BPF.
//
// The main backend is a struct_ops tcp_congestion_ops (bpf/coopcc_cubic.c)
// that delegates every callback to CUBIC's kfuncs and keeps snd_cwnd within
// [lo, hi] read from a map keyed by destination. The fallback backend is a
// cgroup sockops program setting TCP_BPF_SNDCWND_CLAMP (upper bound only).
// Both are fail-open: bounds older than the lease are ignored by the BPF code,
// so a crashed agent leaves plain CUBIC behind. Several instances can run at
// once, one per network namespace; each registers its own congestion-control
// name (coopcc_ + 8 hex digits) and makes it the default of its namespace
// only. See docs/datapath.md.
package datapath

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/coopcc/coopcc/internal/ktime"
	"golang.org/x/sys/unix"
)

// Backend names.
const (
	BackendAuto      = "auto"
	BackendStructOps = "struct_ops"
	BackendSockops   = "sockops"
	BackendNone      = "none"
)

// MaxCwnd is the largest bound accepted (segments); larger values are
// almost certainly a mistake.
const MaxCwnd = 100000

// DefaultLease is how long bounds stay valid without a heartbeat.
const DefaultLease = 3 * time.Second

// Bounds are cwnd bounds in segments. Hi 0 = no upper bound, Lo 0 = no lower
// bound. Restart asks the struct_ops backend to restart the kernel's CUBIC of
// the destination's connections once, as a new connection starts (its state
// reset and a slow start): Set stamps the request with the time, and every
// connection that existed before acts on it at its next ACK while the
// entry holds it (the sockops backend ignores it).
type Bounds struct {
	Lo, Hi  uint32
	Restart bool
}

// Validate reports bounds that cannot be enforced.
func (b Bounds) Validate() error {
	if b.Hi > MaxCwnd || b.Lo > MaxCwnd {
		return fmt.Errorf("bounds lo=%d hi=%d: values above %d segments are not accepted", b.Lo, b.Hi, MaxCwnd)
	}
	if b.Hi != 0 && b.Lo > b.Hi {
		return fmt.Errorf("bounds lo=%d hi=%d: the lower bound must not exceed the upper bound", b.Lo, b.Hi)
	}
	return nil
}

// Options configure Open.
type Options struct {
	// Netns is the name of the network namespace (as in `ip netns`) whose
	// default congestion control is switched; "" = the caller's namespace.
	Netns string
	// Lease is how long bounds stay valid after the last Heartbeat
	// (default 3s).
	Lease time.Duration
	// Backend is "auto" (default), "struct_ops" or "sockops".
	Backend string
	// SwitchExisting switches connections that exist at Open to the bounded
	// CC too (struct_ops backend, BPF TCP iterator).
	SwitchExisting bool
	// CCName overrides the registered congestion-control name (default
	// coopcc_ + 8 random hex digits, at most 15 characters; NewCCName).
	CCName string
	// Original is the namespace's default congestion control from before
	// any coopcc instance ran, as a crashed predecessor recorded it. When
	// the current default is a dead instance's (or Adopt's), Close
	// restores Original instead of a guess; "" = unknown.
	Original string
	// Adopt lists the congestion controls of dead instances (a crashed
	// predecessor's, from its state file). Open moves their sockets to
	// this instance (struct_ops) or to plain cubic (sockops), so that
	// flows which survived the crash are bounded again. A default that is
	// an unregistered coopcc_ name is adopted without being listed.
	Adopt []string
	// AdoptPrograms are a dead instance's sockops programs; Open detaches
	// them (without waiting for their heartbeat to go stale).
	AdoptPrograms []ebpf.ProgramID
	// OnLoaded is called once the objects are loaded, before anything in
	// the kernel outside them changes (registration, attach, sysctl), with
	// their IDs and the default Close will restore, so the caller can
	// record them; an error aborts Open.
	OnLoaded func(Loaded) error
	// Step, if set, is called after each named step of Open and Close
	// (StepLoaded, …): the agent's crash-injection tests kill the process
	// there.
	Step func(name string)
}

// Steps of Open and Close reported to Options.Step, in order.
const (
	StepLoaded          = "dp-loaded"           // objects loaded, nothing registered
	StepRegistered      = "dp-registered"       // struct_ops CC registered / sockops attached
	StepDefaultSet      = "dp-default-set"      // namespace default CC switched to ours
	StepAdopted         = "dp-adopted"          // dead instances' sockets moved to ours
	StepSwitched        = "dp-switched"         // pre-existing sockets moved to ours
	StepFailOpen        = "dp-fail-open"        // Close: lease expired
	StepDefaultRestored = "dp-default-restored" // Close: namespace default restored
	StepSwitchedBack    = "dp-switched-back"    // Close: sockets moved to plain cubic
	StepUnregistered    = "dp-unregistered"     // Close: CC unregistered / program detached
)

// Loaded is what Open reports to Options.OnLoaded before it changes the
// namespace.
type Loaded struct {
	Backend string
	CCName  string    // "" for sockops
	Objects ObjectIDs // programs and maps of this instance
	// Original is the default congestion control Close will restore (""
	// for sockops, which does not change it).
	Original string
}

// step calls the hook, if any.
func (o Options) step(name string) {
	if o.Step != nil {
		o.Step(name)
	}
}

// Counters count, per destination, how often each bound changed a cwnd (or
// ssthresh) and how many connections restarted on request (Bounds.Restart).
type Counters struct{ LoApplied, HiApplied, Restarts uint64 }

// Datapath is one loaded instance. Its methods may be called from several
// goroutines at once.
type Datapath struct {
	mu sync.RWMutex // guards closed against Close

	backend  string
	receive  bool // the receive side (OpenReceive): Hi clamps advertised windows
	ccName   string
	lease    time.Duration
	bounds   *ebpf.Map
	config   *ebpf.Map
	counters *ebpf.Map
	switched SwitchResult
	adopted  SwitchResult
	original string
	objIDs   ObjectIDs
	closeFn  func() error
	closed   bool
	opts     Options
}

// Open loads and registers the datapath, sets the namespace's default
// congestion control (struct_ops backend) and starts the lease with a first
// heartbeat. Close undoes everything. On error nothing is left installed.
func Open(opts Options) (*Datapath, error) {
	if opts.Lease == 0 {
		opts.Lease = DefaultLease
	}
	if opts.Lease < 0 {
		return nil, fmt.Errorf("lease %v: must be positive", opts.Lease)
	}
	if opts.Backend == "" {
		opts.Backend = BackendAuto
	}
	if unix.Geteuid() != 0 {
		return nil, errors.New("loading BPF programs needs root (or CAP_BPF+CAP_NET_ADMIN): run coopcc as root")
	}
	var (
		d   *Datapath
		err error
	)
	switch opts.Backend {
	case BackendAuto:
		d, err = openStructOps(opts)
		var unsup *unsupportedError
		if errors.As(err, &unsup) {
			// Kernel without struct_ops or the CUBIC kfuncs: fall back.
			d, err = openSockops(opts)
			if err != nil {
				return nil, fmt.Errorf("no datapath backend works on this kernel: struct_ops: %v; sockops: %w", unsup, err)
			}
		}
	case BackendStructOps:
		d, err = openStructOps(opts)
	case BackendSockops:
		d, err = openSockops(opts)
	default:
		return nil, fmt.Errorf("backend %q: must be auto, struct_ops or sockops", opts.Backend)
	}
	if err != nil {
		return nil, err
	}
	d.lease, d.opts = opts.Lease, opts
	if err := d.Heartbeat(); err != nil {
		_ = d.Close()
		return nil, err
	}
	return d, nil
}

// unsupportedError marks a backend the kernel cannot load (Open with
// "auto" then tries the next one).
type unsupportedError struct{ err error }

func (e *unsupportedError) Error() string { return e.err.Error() }
func (e *unsupportedError) Unwrap() error { return e.err }

// Backend returns the backend in use ("struct_ops", "sockops" or, for
// OpenReceive, "rcvwnd").
func (d *Datapath) Backend() string { return d.backend }

// CCName returns the registered congestion-control name ("" for sockops).
func (d *Datapath) CCName() string { return d.ccName }

// Switched reports how many pre-existing connections Open moved to the
// bounded CC (SwitchExisting, struct_ops backend).
func (d *Datapath) Switched() SwitchResult { return d.switched }

// Adopted reports how many sockets of dead instances Open moved to this
// instance (struct_ops) or to plain cubic (sockops).
func (d *Datapath) Adopted() SwitchResult { return d.adopted }

// Original returns the default congestion control Close restores ("" for
// sockops, which does not change it).
func (d *Datapath) Original() string { return d.original }

// Lease returns the lease duration.
func (d *Datapath) Lease() time.Duration { return d.lease }

// keyOf maps an address to the BPF key: IPv4 as IPv4-mapped IPv6, the
// invalid (zero) Addr as the all-zero default key.
func keyOf(a netip.Addr) (k cubicCoopccKey) {
	if !a.IsValid() {
		return k
	}
	k.Addr = a.Unmap().As16() // IPv4 becomes ::ffff:a.b.c.d
	return k
}

// addrOf is the inverse of keyOf.
func addrOf(k cubicCoopccKey) netip.Addr {
	var zero [16]byte
	if k.Addr == zero {
		return netip.Addr{}
	}
	return netip.AddrFrom16(k.Addr).Unmap()
}

// Set sets the bounds for a destination; the invalid (zero) Addr sets the
// host-wide default. The sockops backend enforces Hi only (Lo is stored and
// ignored).
func (d *Datapath) Set(dst netip.Addr, b Bounds) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if d.receive && b.Lo != 0 {
		return fmt.Errorf("bounds lo=%d for %v: a receiver cannot make a sender send more; receive bounds have hi only", b.Lo, dst)
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return errors.New("set bounds: datapath is closed")
	}
	k := keyOf(dst)
	v := cubicCoopccBounds{Lo: b.Lo, Hi: b.Hi}
	if b.Restart {
		now, err := ktime.Now()
		if err != nil {
			return fmt.Errorf("set bounds for %v: restart time: %w", dst, err)
		}
		v.RestartNs = now
	}
	if err := d.bounds.Put(&k, &v); err != nil {
		return fmt.Errorf("set bounds for %v: %w", dst, err)
	}
	return nil
}

// Delete removes the bounds of a destination (the zero Addr: the default).
// Deleting an absent entry is not an error.
func (d *Datapath) Delete(dst netip.Addr) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return errors.New("delete bounds: datapath is closed")
	}
	k := keyOf(dst)
	if err := d.bounds.Delete(&k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return fmt.Errorf("delete bounds for %v: %w", dst, err)
	}
	return nil
}

// Heartbeat refreshes the lease: bounds stay in force for Lease from now.
func (d *Datapath) Heartbeat() error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return errors.New("heartbeat: datapath is closed")
	}
	now, err := ktime.Now()
	if err != nil {
		return err
	}
	return d.writeConfig(now)
}

func (d *Datapath) writeConfig(heartbeat uint64) error {
	cfg := cubicCoopccConfig{HeartbeatNs: heartbeat, LeaseNs: uint64(d.lease.Nanoseconds())}
	if err := d.config.Put(uint32(0), &cfg); err != nil {
		return fmt.Errorf("write heartbeat: %w", err)
	}
	return nil
}

// Counters returns, per destination, how often the bounds were applied
// (summed over CPUs). The zero Addr never appears: counters are kept per
// real destination.
func (d *Datapath) Counters() (map[netip.Addr]Counters, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, errors.New("counters: datapath is closed")
	}
	out := map[netip.Addr]Counters{}
	var (
		k    cubicCoopccKey
		vals []cubicCoopccCounters
	)
	it := d.counters.Iterate()
	for it.Next(&k, &vals) {
		var c Counters
		for _, v := range vals {
			c.LoApplied += v.LoApplied
			c.HiApplied += v.HiApplied
			c.Restarts += v.Restarts
		}
		out[addrOf(k)] = c
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("read counters: %w", err)
	}
	return out, nil
}

// Close expires the lease, restores the namespace's previous default
// congestion control, switches connections back and unloads every BPF
// object. It is safe to call twice.
func (d *Datapath) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	var errs []error
	if d.config != nil {
		// Fail-open immediately, whatever happens next.
		if err := d.writeConfig(0); err != nil {
			errs = append(errs, err)
		}
		d.opts.step(StepFailOpen)
	}
	if d.closeFn != nil {
		errs = append(errs, d.closeFn())
	}
	return errors.Join(errs...)
}

// ObjectIDs are the kernel IDs of an instance's BPF programs and maps (what
// `bpftool prog show` / `bpftool map show` list).
type ObjectIDs struct {
	Programs []ebpf.ProgramID
	Maps     []ebpf.MapID
}

// Objects returns the IDs of the instance's BPF programs and maps.
func (d *Datapath) Objects() ObjectIDs { return d.objIDs }

// collectIDs reads the kernel IDs of programs and maps (best effort).
func collectIDs(objs ...any) ObjectIDs {
	var ids ObjectIDs
	for _, o := range objs {
		switch v := o.(type) {
		case *ebpf.Program:
			if info, err := v.Info(); err == nil {
				if id, ok := info.ID(); ok {
					ids.Programs = append(ids.Programs, id)
				}
			}
		case *ebpf.Map:
			if info, err := v.Info(); err == nil {
				if id, ok := info.ID(); ok {
					ids.Maps = append(ids.Maps, id)
				}
			}
		}
	}
	return ids
}

// Gone reports whether none of the objects exists in the kernel any more.
func (ids ObjectIDs) Gone() bool {
	for _, id := range ids.Programs {
		if p, err := ebpf.NewProgramFromID(id); err == nil {
			p.Close()
			return false
		}
	}
	for _, id := range ids.Maps {
		if m, err := ebpf.NewMapFromID(id); err == nil {
			m.Close()
			return false
		}
	}
	return true
}

func (d *Datapath) isClosed() bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.closed
}

package datapath

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/coopcc/coopcc/internal/ktime"
	"github.com/coopcc/coopcc/internal/nsenter"
	"golang.org/x/sys/unix"
)

// sockopsDrain is how long Close keeps the sockops program attached after
// expiring the lease, so active flows get their clamp reset.
const sockopsDrain = 300 * time.Millisecond

// cgroup2Root returns where the cgroup v2 hierarchy is mounted.
func cgroup2Root() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("read mounts: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint options ... - fstype source superopts
		fields := strings.Fields(sc.Text())
		for i, fld := range fields {
			if fld == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				return fields[4], nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read mounts: %w", err)
	}
	return "", errNoCgroup2
}

var errNoCgroup2 = errors.New("cgroup v2 is not mounted")

// withCgroup2Root calls fn with the cgroup v2 root directory. When cgroup2
// is not mounted (e.g. under `ip netns exec`, which remounts /sys), it
// mounts it on a temporary directory for the duration of fn: an attached
// program holds the cgroup, not the mount.
func withCgroup2Root(fn func(root string) error) error {
	root, err := cgroup2Root()
	if err == nil {
		return fn(root)
	}
	if !errors.Is(err, errNoCgroup2) {
		return err
	}
	dir, err := os.MkdirTemp("", "coopcc-cgroup2-")
	if err != nil {
		return fmt.Errorf("cgroup v2 not mounted; temporary mount point: %w", err)
	}
	defer os.Remove(dir)
	if err := unix.Mount("cgroup2", dir, "cgroup2", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("cgroup v2 not mounted and mounting it failed (mount -t cgroup2 none /sys/fs/cgroup/unified): %w", err)
	}
	defer unix.Unmount(dir, unix.MNT_DETACH)
	return fn(dir)
}

// haveCgroup2 reports whether the kernel has the cgroup2 filesystem.
func haveCgroup2() bool {
	b, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[len(f)-1] == "cgroup2" {
			return true
		}
	}
	return false
}

// netnsCookie returns the cookie of the named namespace ("" = the caller's),
// read with SO_NETNS_COOKIE from a socket created inside it.
func netnsCookie(ns string) (uint64, error) {
	var cookie uint64
	err := nsenter.Do(ns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		defer unix.Close(fd)
		v, err := unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_NETNS_COOKIE)
		if err != nil {
			return fmt.Errorf("getsockopt SO_NETNS_COOKIE: %w", err)
		}
		cookie = v
		return nil
	})
	return cookie, err
}

// staleAfter is how far past its lease a sockops instance's heartbeat must
// be before another instance detaches it as dead.
const staleAfter = 10 * time.Second

// openSockops attaches the TCP_BPF_SNDCWND_CLAMP program to the root cgroup
// v2, restricted to the namespace's sockets by its netns cookie.
//
// The program is attached with BPF_PROG_ATTACH (BPF_F_ALLOW_MULTI), not a
// BPF link, on purpose: the attachment outlives a SIGKILLed process, so the
// program is still there to remove the clamps once the lease expires
// (fail-open). A clean Close detaches it; dead instances' programs are
// detached by the next Open (see detachStaleSockops).
func openSockops(opts Options) (*Datapath, error) {
	spec, err := sockopsSpec(loadSockops, "sockops", opts.Netns)
	if err != nil {
		return nil, err
	}
	var objs sockopsObjects
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		return nil, &unsupportedError{fmt.Errorf("load sockops program: %w", explainLoadError(err))}
	}
	ids := collectIDs(objs.CoopccBnd, objs.CoopccCfg, objs.CoopccCnt, objs.CoopccSkclamp, objs.CoopccSockops)
	if opts.OnLoaded != nil {
		if err := opts.OnLoaded(Loaded{Backend: BackendSockops, Objects: ids}); err != nil {
			_ = objs.Close()
			return nil, fmt.Errorf("record loaded objects: %w", err)
		}
	}
	opts.step(StepLoaded)
	// A crashed predecessor's leftovers: sockets on its dead struct_ops go
	// to plain cubic (this backend bounds whatever CC a socket has), the
	// default goes back to the original, its sockops program is detached.
	left, err := Cleanup(Leftovers{Netns: opts.Netns, Original: opts.Original, CCNames: opts.Adopt, SockopsPrograms: opts.AdoptPrograms})
	if err != nil {
		_ = objs.Close()
		return nil, fmt.Errorf("clean up a dead instance's leftovers: %w", err)
	}
	opts.step(StepAdopted)
	// A fresh heartbeat before attaching, so no other instance takes this
	// one for dead.
	if err := primeHeartbeat(objs.CoopccCfg, opts.Lease); err != nil {
		_ = objs.Close()
		return nil, err
	}
	detach, err := attachSockops(objs.CoopccSockops)
	if err != nil {
		_ = objs.Close()
		return nil, err
	}
	opts.step(StepRegistered)
	d := &Datapath{
		backend:  BackendSockops,
		bounds:   objs.CoopccBnd,
		config:   objs.CoopccCfg,
		counters: objs.CoopccCnt,
		adopted:  left.Switched,
		objIDs:   ids,
	}
	d.closeFn = func() error {
		err := detach()
		opts.step(StepUnregistered)
		return errors.Join(err, objs.Close())
	}
	return d, nil
}

// sockopsSpec parses a sockops object (what names it in errors) and
// restricts its program to the namespace ns (netns_cookie).
func sockopsSpec(load func() (*ebpf.CollectionSpec, error), what, ns string) (*ebpf.CollectionSpec, error) {
	cookie, err := netnsCookie(ns)
	if err != nil {
		return nil, fmt.Errorf("namespace cookie: %w", err)
	}
	spec, err := load()
	if err != nil {
		return nil, fmt.Errorf("parse %s object: %w", what, err)
	}
	if err := spec.Variables["netns_cookie"].Set(cookie); err != nil {
		return nil, fmt.Errorf("set netns_cookie: %w", err)
	}
	return spec, nil
}

// primeHeartbeat writes a fresh heartbeat into an instance's config map
// before its program is attached, so that no other instance takes it for
// dead (detachStaleSockops).
func primeHeartbeat(cfg *ebpf.Map, lease time.Duration) error {
	now, err := ktime.Now()
	if err == nil {
		err = cfg.Put(uint32(0), &cubicCoopccConfig{HeartbeatNs: now, LeaseNs: uint64(lease)})
	}
	if err != nil {
		return fmt.Errorf("write heartbeat: %w", err)
	}
	return nil
}

// attachSockops attaches prog to the cgroup v2 root with BPF_PROG_ATTACH
// (BPF_F_ALLOW_MULTI), after detaching dead instances' programs. The
// returned detach waits sockopsDrain first: a setting a program made on a
// socket (a cwnd or window clamp) stays after the program is gone, and the
// caller has already expired the lease, so the program resets the setting
// of every flow that sends or receives a segment now. Flows idle at that
// moment keep their last setting until they end (docs/datapath.md).
func attachSockops(prog *ebpf.Program) (detach func() error, err error) {
	var cg *os.File
	err = withCgroup2Root(func(root string) error {
		f, err := os.Open(root)
		if err != nil {
			return fmt.Errorf("open the cgroup v2 root %s: %w", root, err)
		}
		detachStaleSockops(int(f.Fd()))
		if err := link.RawAttachProgram(link.RawAttachProgramOptions{
			Target: int(f.Fd()), Program: prog,
			Attach: ebpf.AttachCGroupSockOps, Flags: unix.BPF_F_ALLOW_MULTI,
		}); err != nil {
			f.Close()
			return fmt.Errorf("attach sockops to the cgroup v2 root %s: %w", root, err)
		}
		cg = f // stays usable after a temporary mount is lazily unmounted
		return nil
	})
	if err != nil {
		return nil, err
	}
	return func() error {
		time.Sleep(sockopsDrain)
		err := link.RawDetachProgram(link.RawDetachProgramOptions{
			Target: int(cg.Fd()), Program: prog, Attach: ebpf.AttachCGroupSockOps,
		})
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("detach sockops program: %w", err)
		} else {
			err = nil
		}
		return errors.Join(err, cg.Close())
	}, nil
}

// detachStaleSockops detaches coopcc sockops programs of dead instances
// from the cgroup: those whose heartbeat is older than their lease plus
// staleAfter. A live instance refreshes its heartbeat every lease/3. Best
// effort: errors only mean the stale program stays (it is fail-open anyway,
// with its lease expired it removes clamps and sets none).
func detachStaleSockops(cgroupFD int) {
	res, err := link.QueryPrograms(link.QueryOptions{Target: cgroupFD, Attach: ebpf.AttachCGroupSockOps})
	if err != nil {
		return
	}
	now, err := ktime.Now()
	if err != nil {
		return
	}
	for _, ap := range res.Programs {
		if _, viaLink := ap.LinkID(); viaLink {
			continue
		}
		prog, err := ebpf.NewProgramFromID(ap.ID)
		if err != nil {
			continue
		}
		if sockopsDead(prog, now) {
			_ = link.RawDetachProgram(link.RawDetachProgramOptions{Target: cgroupFD, Program: prog, Attach: ebpf.AttachCGroupSockOps})
		}
		prog.Close()
	}
}

func sockopsDead(prog *ebpf.Program, now uint64) bool {
	info, err := prog.Info()
	if err != nil || (info.Name != "coopcc_sockops" && info.Name != "coopcc_rcvwnd") {
		return false
	}
	ids, ok := info.MapIDs()
	if !ok {
		return false
	}
	for _, id := range ids {
		m, err := ebpf.NewMapFromID(id)
		if err != nil {
			continue
		}
		mi, err := m.Info()
		if err != nil || mi.Name != "coopcc_cfg" {
			m.Close()
			continue
		}
		var cfg cubicCoopccConfig
		err = m.Lookup(uint32(0), &cfg)
		m.Close()
		if err != nil || cfg.HeartbeatNs == 0 {
			return false // closing right now, or unreadable
		}
		return now > cfg.HeartbeatNs && now-cfg.HeartbeatNs > cfg.LeaseNs+uint64(staleAfter)
	}
	return false
}

package datapath

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// ccPrefix starts every congestion-control name this package registers.
const ccPrefix = "coopcc_"

// hostNetns is the network namespace of PID 1: new namespaces inherit its
// default congestion control, so it is the best guess for a namespace's
// original default when nothing recorded it.
const hostNetns = "/proc/1/ns/net"

// IsCCName reports whether name looks like a congestion control this
// package registers (coopcc_ + 8 hex digits).
func IsCCName(name string) bool {
	return strings.HasPrefix(name, ccPrefix) && len(name) == len(ccPrefix)+8
}

// DefaultCC returns net.ipv4.tcp_congestion_control of a namespace ("" =
// the caller's).
func DefaultCC(ns string) (string, error) { return readDefaultCC(ns) }

// CCRegistered reports whether a congestion control is registered
// (net.ipv4.tcp_available_congestion_control, global).
func CCRegistered(name string) (bool, error) { return ccRegistered(name) }

// restoreTarget decides what Close restores and which congestion controls
// are dead instances' (their sockets are adopted). cur is the namespace's
// default now. When cur is a dead instance's (listed in adopt, or an
// unregistered coopcc_ name), the value before it is original if that is
// usable, else the host's default (fallbackDefault). A registered cur that
// is not ours is the operator's choice and is kept.
func restoreTarget(ns, cur, original string, adopt []string) (old string, dead []string, err error) {
	for _, n := range adopt {
		if n == "" || slices.Contains(dead, n) {
			continue
		}
		ok, err := ccRegistered(n)
		if err != nil {
			return "", nil, err
		}
		if !ok { // a registered name belongs to a live instance: leave it
			dead = append(dead, n)
		}
	}
	curOK, err := ccRegistered(cur)
	if err != nil {
		return "", nil, err
	}
	if curOK && !slices.Contains(dead, cur) {
		return cur, dead, nil
	}
	if IsCCName(cur) && !slices.Contains(dead, cur) {
		dead = append(dead, cur)
	}
	if original != "" && !IsCCName(original) {
		if ok, err := ccRegistered(original); err == nil && ok {
			return original, dead, nil
		}
	}
	return fallbackDefault(ns), dead, nil
}

// fallbackDefault is the default to restore when the original is lost: the
// host's (PID 1's namespace, which a new namespace inherits; not readable
// in every container), else the caller's (when ns is another namespace),
// if registered and not ours; else reno, which is always built in.
func fallbackDefault(ns string) string {
	from := []string{hostNetns}
	if ns != "" {
		from = append(from, "")
	}
	for _, from := range from {
		if c, err := readDefaultCC(from); err == nil && !IsCCName(c) {
			if ok, _ := ccRegistered(c); ok {
				return c
			}
		}
	}
	return "reno"
}

// adoptSockets moves the sockets of each dead congestion control to to.
func adoptSockets(ns string, dead []string, to string) (SwitchResult, error) {
	var total SwitchResult
	for _, n := range dead {
		res, err := switchCC(ns, n, "", to)
		if err != nil {
			return total, fmt.Errorf("move sockets of dead instance %s to %s: %w", n, to, err)
		}
		total.Switched += res.Switched
		total.Failed += res.Failed
	}
	return total, nil
}

// Leftovers is what a dead instance may have left in a namespace, as its
// owner recorded it (the agent's state file).
type Leftovers struct {
	// Netns is the namespace name or path ("" = the caller's).
	Netns string
	// Original is the default congestion control before the instance ran.
	Original string
	// CCNames are the instances' congestion controls.
	CCNames []string
	// SockopsPrograms are sockops programs to detach from the cgroup root.
	SockopsPrograms []ebpf.ProgramID
}

// CleanupResult says what Cleanup did.
type CleanupResult struct {
	// DefaultFrom and DefaultTo are the namespace default before and
	// after ("" = not changed).
	DefaultFrom, DefaultTo string
	// Switched counts sockets moved from dead instances to plain cubic.
	Switched SwitchResult
	// Detached counts sockops programs detached.
	Detached int
}

// Cleanup removes what dead instances left in a namespace, without loading
// a new instance: the namespace default goes back to the original when it
// is a dead instance's (or an unregistered coopcc_ name), sockets on dead
// instances' congestion controls move to plain cubic — which drops the last
// references to their programs and maps, so the kernel frees them — and the
// listed sockops programs are detached. Live instances' names (registered)
// are left alone. Running it twice does nothing the second time.
func Cleanup(l Leftovers) (CleanupResult, error) {
	var res CleanupResult
	if os.Geteuid() != 0 {
		return res, errors.New("cleanup needs root (it changes sysctls and sockets of the namespace)")
	}
	cur, err := readDefaultCC(l.Netns)
	if err != nil {
		return res, err
	}
	old, dead, err := restoreTarget(l.Netns, cur, l.Original, l.CCNames)
	if err != nil {
		return res, err
	}
	var errs []error
	if old != cur {
		if err := writeDefaultCC(l.Netns, old); err != nil {
			errs = append(errs, err)
		} else {
			res.DefaultFrom, res.DefaultTo = cur, old
		}
	}
	sw, err := adoptSockets(l.Netns, dead, "cubic")
	res.Switched = sw
	errs = append(errs, err)
	n, err := detachSockops(l.SockopsPrograms)
	res.Detached = n
	errs = append(errs, err)
	return res, errors.Join(errs...)
}

// detachSockops detaches the listed coopcc sockops programs from the
// cgroup v2 root (others, and programs already gone, are skipped).
func detachSockops(ids []ebpf.ProgramID) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	n := 0
	err := withCgroup2Root(func(root string) error {
		f, err := os.Open(root)
		if err != nil {
			return fmt.Errorf("open the cgroup v2 root %s: %w", root, err)
		}
		defer f.Close()
		for _, id := range ids {
			prog, err := ebpf.NewProgramFromID(id)
			if err != nil {
				continue // gone
			}
			info, err := prog.Info()
			if err == nil && (info.Name == "coopcc_sockops" || info.Name == "coopcc_rcvwnd") {
				if link.RawDetachProgram(link.RawDetachProgramOptions{Target: int(f.Fd()), Program: prog, Attach: ebpf.AttachCGroupSockOps}) == nil {
					n++
				}
			}
			prog.Close()
		}
		return nil
	})
	return n, err
}

package testbed

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coopcc/coopcc/internal/nsenter"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// NamePrefix starts the name of every network namespace the lab creates:
// "cclab-<pid>-<n>-<node>", so `coopcc lab clean` can find leftovers and
// tell whether their owner still runs.
const NamePrefix = "cclab-"

const netnsDir = "/var/run/netns"

var runCounter atomic.Uint32

// newPrefix returns a namespace-name prefix unique to this process and call.
func newPrefix() string {
	return fmt.Sprintf("%s%d-%d", NamePrefix, os.Getpid(), runCounter.Add(1))
}

// createNetns creates the named network namespace (bind-mounted under
// /var/run/netns like `ip netns add`) with loopback up, without moving the
// calling goroutine's thread.
func createNetns(name string) error {
	if err := shareNetnsDir(); err != nil {
		return err
	}
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("get current network namespace: %w", err)
	}
	defer orig.Close()
	parent, err := smallHashParent()
	if err != nil {
		_ = netns.Set(orig)
		runtime.UnlockOSThread()
		return err
	}
	defer parent.Close()
	h, err := netns.NewNamed(name)
	if err != nil {
		_ = netns.Set(orig)
		runtime.UnlockOSThread()
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create network namespace %s: already exists (run `coopcc lab clean`)", name)
		}
		return fmt.Errorf("create network namespace %s: %w", name, err)
	}
	defer h.Close()
	if err := netns.Set(orig); err != nil {
		return fmt.Errorf("return from network namespace %s: %w", name, err) // thread stays locked and is discarded
	}
	runtime.UnlockOSThread()
	nh, err := netlink.NewHandleAt(h)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", name, err)
	}
	defer nh.Close()
	lo, err := nh.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("find lo in %s: %w", name, err)
	}
	if err := nh.LinkSetUp(lo); err != nil {
		return fmt.Errorf("set lo up in %s: %w", name, err)
	}
	return nil
}

// childEhashEntries is the size of the TCP established-socket hash of each
// lab namespace. By default every namespace shares the host's table
// (net.ipv4.tcp_ehash_entries: 262,144 buckets on a 24 GB machine), and
// every inet_diag dump walks all of it: the lab's 20 Hz sampler of 10
// namespaces spent 30-40 % of a core in those walks (--cpuprofile), CPU
// the emulator's timing thread and the senders need. A lab namespace holds a
// few dozen sockets.
const childEhashEntries = 4096

// smallHashParent moves the calling (locked) thread into a fresh, unnamed
// network namespace whose net.ipv4.tcp_child_ehash_entries is
// childEhashEntries, so that the namespace created next from it gets a
// private hash of that size (Linux 6.1+; on older kernels the sysctl is
// missing and the namespace shares the host's table as before). The host's
// own sysctl is not touched. The caller closes the returned handle once the
// child exists (the parent namespace then goes away) and moves the thread
// back.
func smallHashParent() (netns.NsHandle, error) {
	p, err := netns.New()
	if err != nil {
		return netns.None(), fmt.Errorf("create a parent network namespace: %w", err)
	}
	const key = "/proc/sys/net/ipv4/tcp_child_ehash_entries"
	err = os.WriteFile(key, []byte(fmt.Sprint(childEhashEntries)), 0o644)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		p.Close()
		return netns.None(), fmt.Errorf("set %s in the parent namespace: %w", key, err)
	}
	return p, nil
}

// shareNetnsDir makes /run/netns a shared mount point of its own before a
// namespace is mounted there, as `ip netns add` does. Without it, the first
// `ip netns add` run while lab namespaces exist bind-mounts /run/netns over
// itself and hides their mounts underneath: they can then never be removed
// (EBUSY) until the machine restarts.
func shareNetnsDir() error {
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", netnsDir, err)
	}
	err := unix.Mount("", netnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if errors.Is(err, unix.EINVAL) { // not a mount point yet
		if err := unix.Mount(netnsDir, netnsDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind-mount %s on itself: %w", netnsDir, err)
		}
		err = unix.Mount("", netnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
	}
	if err != nil {
		return fmt.Errorf("make %s a shared mount: %w", netnsDir, err)
	}
	return nil
}

// deleteNetns kills every process left in the namespace and removes it.
// A namespace that does not exist is not an error.
func deleteNetns(name string) error {
	if _, err := os.Stat(filepath.Join(netnsDir, name)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	for _, pid := range netnsPids(name) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if err := removeNetnsFile(filepath.Join(netnsDir, name)); err != nil {
		return fmt.Errorf("delete network namespace %s: %w", name, err)
	}
	return nil
}

// removeNetnsFile unmounts a namespace's bind mount and removes the file.
// A file that is no longer a mount point (an earlier delete unmounted it but
// could not remove it) is removed all the same; EBUSY, which the removal
// returns while a process that entered another mount namespace during the
// run (ip netns exec, a test) still has the mount, is retried for a second.
func removeNetnsFile(path string) error {
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount %s: %w", path, err)
	}
	for try := 0; ; try++ {
		err := os.Remove(path)
		switch {
		case err == nil || errors.Is(err, fs.ErrNotExist):
			return nil
		case !errors.Is(err, unix.EBUSY):
			return err
		case try == 20:
			return fmt.Errorf("%w (its mount is hidden under a later bind mount of %s, made by `ip netns` while it existed; it goes away with `umount -l %s` when no other namespace is in use, or at reboot)", err, netnsDir, netnsDir)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// NetnsInode returns the inode of the named namespace (a name under
// /var/run/netns, as `ip netns` makes them): what a process inside it reads
// from /proc/self/ns/net.
func NetnsInode(name string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(netnsDir, name), &st); err != nil {
		return 0, fmt.Errorf("namespace %s: %w", name, err)
	}
	return st.Ino, nil
}

// netnsPids lists the processes whose network namespace is the named one
// (what `ip netns pids` does).
func netnsPids(name string) []int {
	var target syscall.Stat_t
	if err := syscall.Stat(filepath.Join(netnsDir, name), &target); err != nil {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(fmt.Sprintf("/proc/%d/ns/net", pid), &st) != nil {
			continue
		}
		if st.Dev == target.Dev && st.Ino == target.Ino {
			pids = append(pids, pid)
		}
	}
	return pids
}

// inNetns runs fn on a locked OS thread switched into the named namespace.
func inNetns(name string, fn func() error) error { return nsenter.Do(name, fn) }

func sysctlPath(key string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
}

// setSysctls writes sysctls (key "net.ipv4.tcp_congestion_control") inside
// the namespace.
func setSysctls(ns string, kv [][2]string) error {
	return inNetns(ns, func() error {
		for _, p := range kv {
			if err := os.WriteFile(sysctlPath(p[0]), []byte(p[1]), 0o644); err != nil {
				return fmt.Errorf("set %s=%s in %s: %w", p[0], p[1], ns, err)
			}
		}
		return nil
	})
}

// HostSysctls reads sysctls of the host (the caller's namespace); unreadable
// keys are left out.
func HostSysctls(keys ...string) map[string]string {
	m, _ := readSysctls("", keys)
	return m
}

// readSysctls reads sysctls inside the namespace ("" = the caller's);
// unreadable keys are left out.
func readSysctls(ns string, keys []string) (map[string]string, error) {
	out := map[string]string{}
	read := func() error {
		for _, k := range keys {
			b, err := os.ReadFile(sysctlPath(k))
			if err == nil {
				out[k] = strings.Join(strings.Fields(string(b)), " ")
			}
		}
		return nil
	}
	var err error
	if ns == "" {
		err = read()
	} else {
		err = inNetns(ns, read)
	}
	return out, err
}

// Leftover is a namespace from an earlier lab run.
type Leftover struct {
	Name     string
	OwnerPID int
	Running  bool // the owning process still runs
}

// Leftovers lists the lab's namespaces (NamePrefix) on this machine.
func Leftovers() ([]Leftover, error) {
	entries, err := os.ReadDir(netnsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list network namespaces: %w", err)
	}
	var out []Leftover
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), NamePrefix)
		if !ok {
			continue
		}
		l := Leftover{Name: e.Name()}
		if pidStr, _, ok := strings.Cut(rest, "-"); ok {
			if pid, err := strconv.Atoi(pidStr); err == nil {
				l.OwnerPID = pid
				// Any live process with the owner's PID counts as the owner.
				// Telling a reused PID apart by the process name (as this
				// once did) killed live runs started from a binary not named
				// "coopcc"; a stale namespace kept by a reused PID is the
				// safe error (`lab clean --all` removes it).
				l.Running = pid == os.Getpid() || processExists(pid)
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// processExists reports whether a process with this PID exists.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Clean deletes leftover lab namespaces (and kills what runs in them). It
// skips those whose owner still runs unless all is set. It returns the
// names it removed.
func Clean(all bool) ([]string, error) {
	ls, err := Leftovers()
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, l := range ls {
		if l.Running && !all {
			continue
		}
		if err := deleteNetns(l.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, l.Name)
	}
	return removed, errors.Join(errs...)
}

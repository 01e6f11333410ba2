// Package nsenter runs code inside a named network namespace: on a locked OS
// thread switched into the namespace and back. Sockets, TAP devices, netlink
// handles and BPF links created there stay bound to that namespace for their
// whole life, whichever thread uses them later.
package nsenter

import (
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Open returns a handle on a network namespace given by name (as `ip netns
// list` shows it) or by path (e.g. /proc/PID/ns/net), with an error that
// says what to do when it is missing or not accessible.
func Open(name string) (netns.NsHandle, error) {
	var (
		h   netns.NsHandle
		err error
	)
	if strings.HasPrefix(name, "/") {
		h, err = netns.GetFromPath(name)
	} else {
		h, err = netns.GetFromName(name)
	}
	switch {
	case err == nil:
		return h, nil
	case errors.Is(err, fs.ErrNotExist):
		return h, fmt.Errorf("unknown network namespace %q (`ip netns list` shows the existing ones)", name)
	case errors.Is(err, fs.ErrPermission):
		return h, fmt.Errorf("open network namespace %q: permission denied (run as root)", name)
	default:
		return h, fmt.Errorf("open network namespace %q: %w", name, err)
	}
}

// Do runs fn on a locked OS thread switched into the network namespace name
// ("" = stay in the current one; a name or a path as for Open), then switches
// the thread back. If the thread cannot be switched back it is left locked,
// so the Go runtime discards it instead of reusing a thread that lives in the
// wrong namespace. fn runs on the calling goroutine (not a new one: a fresh
// goroutine may land on the main thread, which the runtime never discards).
func Do(name string, fn func() error) error {
	if name == "" {
		return fn()
	}
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("get current network namespace: %w", err)
	}
	defer orig.Close()
	target, err := Open(name)
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		runtime.UnlockOSThread()
		if errors.Is(err, unix.EPERM) {
			return fmt.Errorf("enter network namespace %q: permission denied (needs root / CAP_SYS_ADMIN)", name)
		}
		return fmt.Errorf("enter network namespace %q: %w", name, err)
	}
	fnErr := fn()
	if err := netns.Set(orig); err != nil {
		return fmt.Errorf("return from network namespace %q: %w", name, err) // thread stays locked: discarded
	}
	runtime.UnlockOSThread()
	return fnErr
}

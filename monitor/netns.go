package monitor

import (
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// inNetns runs fn on a locked OS thread switched into the network namespace
// name ("" = stay in the current one; a name from `ip netns list`; or a path
// such as /proc/PID/ns/net). Sockets created by fn stay in that namespace
// for their whole life, whichever thread uses them later.
func inNetns(name string, fn func() error) error {
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
	var target netns.NsHandle
	if strings.HasPrefix(name, "/") {
		target, err = netns.GetFromPath(name)
	} else {
		target, err = netns.GetFromName(name)
	}
	if err != nil {
		runtime.UnlockOSThread()
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("unknown network namespace %q (`ip netns list` shows the existing ones)", name)
		}
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("open network namespace %q: permission denied (run as root)", name)
		}
		return fmt.Errorf("open network namespace %q: %w", name, err)
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
		// Leave the thread locked: the runtime then discards it instead of
		// reusing a thread stuck in the wrong namespace.
		return fmt.Errorf("return from network namespace %q: %w", name, err)
	}
	runtime.UnlockOSThread()
	return fnErr
}

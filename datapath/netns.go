package datapath

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/vishvananda/netns"
)

// inNetns runs fn on a locked OS thread inside the named network namespace
// ("" = the caller's) and switches the thread back. If the thread cannot be
// switched back it is left locked, so the Go runtime discards it instead of
// reusing a thread in the wrong namespace. (Running fn on a fresh goroutine
// whose thread is never unlocked is not safe: that goroutine may run on the
// main thread, which the runtime never ends, and the whole process would
// then appear to live in the namespace — `ip netns pids` lists it and test
// cleanup kills it.)
func inNetns(name string, fn func() error) error {
	if name == "" {
		return fn()
	}
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("get current netns: %w", err)
	}
	defer orig.Close()
	target, err := netns.GetFromName(name)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("open netns %q (does `ip netns list` show it?): %w", name, err)
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns %q: %w", name, err)
	}
	fnErr := fn()
	if err := netns.Set(orig); err != nil {
		// Keep the thread locked: it dies with this goroutine.
		return fmt.Errorf("return from netns %q: %w", name, err)
	}
	runtime.UnlockOSThread()
	return fnErr
}

const (
	ccSysctl          = "/proc/sys/net/ipv4/tcp_congestion_control"
	ccAvailableSysctl = "/proc/sys/net/ipv4/tcp_available_congestion_control"
)

// ccRegistered reports whether a congestion control is registered (the
// list is global, not per namespace).
func ccRegistered(name string) (bool, error) {
	b, err := os.ReadFile(ccAvailableSysctl)
	if err != nil {
		return false, fmt.Errorf("read net.ipv4.tcp_available_congestion_control: %w", err)
	}
	for _, f := range strings.Fields(string(b)) {
		if f == name {
			return true, nil
		}
	}
	return false, nil
}

// readDefaultCC returns net.ipv4.tcp_congestion_control of the namespace.
func readDefaultCC(ns string) (string, error) {
	var cur string
	err := inNetns(ns, func() error {
		b, err := os.ReadFile(ccSysctl)
		if err != nil {
			return fmt.Errorf("read net.ipv4.tcp_congestion_control: %w", err)
		}
		cur = strings.TrimSpace(string(b))
		return nil
	})
	return cur, err
}

// writeDefaultCC sets net.ipv4.tcp_congestion_control of the namespace.
func writeDefaultCC(ns, name string) error {
	return inNetns(ns, func() error {
		if err := os.WriteFile(ccSysctl, []byte(name), 0o644); err != nil {
			return fmt.Errorf("set net.ipv4.tcp_congestion_control=%s: %w", name, err)
		}
		return nil
	})
}

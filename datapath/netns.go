package datapath

import (
	"fmt"
	"os"
	"strings"

	"github.com/coopcc/coopcc/internal/nsenter"
)

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
	err := nsenter.Do(ns, func() error {
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
	return nsenter.Do(ns, func() error {
		if err := os.WriteFile(ccSysctl, []byte(name), 0o644); err != nil {
			return fmt.Errorf("set net.ipv4.tcp_congestion_control=%s: %w", name, err)
		}
		return nil
	})
}

package emu

import (
	"fmt"
	"net"

	"github.com/coopcc/coopcc/internal/nsenter"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TAP is a tap device the emulator owns; closing the fd removes the device.
type TAP struct {
	FD    int
	Netns string
	Name  string
}

// WriteFrame writes one Ethernet frame into the namespace's stack.
func (t *TAP) WriteFrame(b []byte) error {
	_, err := unix.Write(t.FD, b)
	return err
}

// Close removes the device.
func (t *TAP) Close() error { return unix.Close(t.FD) }

// OpenTAP creates tap device ifname inside namespace ns (which must exist),
// sets its MAC and transmit queue length and brings it up. The fd is
// non-blocking.
func OpenTAP(ns, ifname string, mac net.HardwareAddr, txqlen int) (*TAP, error) {
	t := &TAP{FD: -1, Netns: ns, Name: ifname}
	err := nsenter.Do(ns, func() error {
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open /dev/net/tun: %w", err)
		}
		ifr, err := unix.NewIfreq(ifname)
		if err != nil {
			unix.Close(fd)
			return fmt.Errorf("interface name %q: %w", ifname, err)
		}
		ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
		if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
			unix.Close(fd)
			return fmt.Errorf("create tap %s (name taken?): %w", ifname, err)
		}
		t.FD = fd
		link, err := netlink.LinkByName(ifname)
		if err != nil {
			return fmt.Errorf("find tap %s: %w", ifname, err)
		}
		if err := netlink.LinkSetHardwareAddr(link, mac); err != nil {
			return fmt.Errorf("set mac of %s: %w", ifname, err)
		}
		if txqlen > 0 {
			if err := netlink.LinkSetTxQLen(link, txqlen); err != nil {
				return fmt.Errorf("set txqueuelen of %s: %w", ifname, err)
			}
		}
		if err := netlink.LinkSetUp(link); err != nil {
			return fmt.Errorf("set %s up: %w", ifname, err)
		}
		return nil
	})
	if err != nil {
		if t.FD >= 0 {
			unix.Close(t.FD)
		}
		return nil, fmt.Errorf("namespace %s: %w", ns, err)
	}
	return t, nil
}

// TxDropped reads the tap's tx_dropped counter: frames the namespace sent
// that the kernel dropped because the emulator did not read them in time.
func (t *TAP) TxDropped() (uint64, error) {
	var v uint64
	err := nsenter.Do(t.Netns, func() error {
		link, err := netlink.LinkByName(t.Name)
		if err != nil {
			return err
		}
		if s := link.Attrs().Statistics; s != nil {
			v = s.TxDropped
		}
		return nil
	})
	return v, err
}

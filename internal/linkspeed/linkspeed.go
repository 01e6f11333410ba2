// Package linkspeed reads and sets a network interface's link speed — what
// `ethtool DEV` prints as "Speed" and /sys/class/net/DEV/speed holds —
// through the SIOCETHTOOL ioctl (ETHTOOL_GSET, ETHTOOL_SSET).
//
// The WLAN emulator sets it on each station's TAP device to the PHY rate the
// station's rate control is sending at, as a Wi-Fi driver reports its
// transmit bitrate; the agent reads it from the interface it is told to
// watch. A TAP lets its owner set any speed (Linux tun.c keeps what it is
// given); most drivers of real wired NICs report the negotiated speed and
// refuse a set; cfg80211 Wi-Fi interfaces implement neither (Get returns
// ErrNotSupported): their rate is in nl80211's station info, which
// internal/wifirate reads and the agent asks when this package has none.
//
// A Handle is an AF_INET datagram socket: the ioctl acts on the interfaces
// of the network namespace the socket was created in, whichever thread uses
// it later.
package linkspeed

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Unknown is the speed the kernel reports for a link without one
// (SPEED_UNKNOWN, -1 as a u32).
const Unknown = ^uint32(0)

// duplexFull is DUPLEX_FULL of linux/ethtool.h.
const duplexFull = 1

// ethtoolCmd is struct ethtool_cmd (include/uapi/linux/ethtool.h), 44 bytes.
type ethtoolCmd struct {
	Cmd           uint32
	Supported     uint32
	Advertising   uint32
	Speed         uint16
	Duplex        uint8
	Port          uint8
	PhyAddress    uint8
	Transceiver   uint8
	Autoneg       uint8
	MdioSupport   uint8
	Maxtxpkt      uint32
	Maxrxpkt      uint32
	SpeedHi       uint16
	EthTpMdix     uint8
	EthTpMdixCtrl uint8
	LpAdvertising uint32
	Reserved      [2]uint32
}

// ifreqData is struct ifreq with ifr_data set, 40 bytes on 64-bit Linux.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// Handle is a socket to issue the ioctls on.
type Handle struct{ fd int }

// Open creates a handle bound to the calling thread's network namespace.
func Open() (*Handle, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("linkspeed: socket: %w", err)
	}
	return &Handle{fd: fd}, nil
}

// Close releases the socket.
func (h *Handle) Close() error { return unix.Close(h.fd) }

func (h *Handle) ioctl(ifname string, c *ethtoolCmd) error {
	if len(ifname) == 0 || len(ifname) >= unix.IFNAMSIZ {
		return fmt.Errorf("interface name %q: must be 1 to %d bytes", ifname, unix.IFNAMSIZ-1)
	}
	var ifr ifreqData
	copy(ifr.name[:], ifname)
	ifr.data = unsafe.Pointer(c)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(h.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	if errno != 0 {
		return errno
	}
	return nil
}

// Get returns ifname's link speed in Mbit/s, or 0 when the driver reports
// none (Unknown) or does not implement the query (a Wi-Fi interface:
// unix.EOPNOTSUPP, returned as ErrNotSupported).
func (h *Handle) Get(ifname string) (uint32, error) {
	c := ethtoolCmd{Cmd: unix.ETHTOOL_GSET}
	if err := h.ioctl(ifname, &c); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			return 0, ErrNotSupported
		}
		return 0, fmt.Errorf("linkspeed: get %s: %w", ifname, err)
	}
	s := uint32(c.SpeedHi)<<16 | uint32(c.Speed)
	if s == Unknown {
		return 0, nil
	}
	return s, nil
}

// ErrNotSupported: the interface's driver has no ethtool link settings.
var ErrNotSupported = errors.New("linkspeed: the driver reports no link speed")

// Set sets ifname's link speed to mbps (≥ 1), full duplex, keeping the rest
// of its settings.
func (h *Handle) Set(ifname string, mbps uint32) error {
	if mbps == 0 || mbps == Unknown {
		return fmt.Errorf("linkspeed: set %s: speed %d Mbit/s is out of range (1 to %d)", ifname, mbps, Unknown-1)
	}
	c := ethtoolCmd{Cmd: unix.ETHTOOL_GSET}
	if err := h.ioctl(ifname, &c); err != nil {
		return fmt.Errorf("linkspeed: get %s before set: %w", ifname, err)
	}
	c.Cmd = unix.ETHTOOL_SSET
	c.Speed, c.SpeedHi = uint16(mbps), uint16(mbps>>16)
	c.Duplex = duplexFull
	if err := h.ioctl(ifname, &c); err != nil {
		return fmt.Errorf("linkspeed: set %s to %d Mbit/s: %w", ifname, mbps, err)
	}
	return nil
}

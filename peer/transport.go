package peer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/coopcc/coopcc/peer/admit"
)

// Transport defaults (docs/protocol.md, section "Transport").
const DefaultPort = 51300

// DefaultGroup6 is the IPv6 link-local multicast group: ff02::114, IANA's
// "any private experiment" address, at link-local scope.
var DefaultGroup6 = netip.MustParseAddr("ff02::114")

// Transport carries datagrams between the terminals of one link.
type Transport interface {
	// Send transmits one message to every terminal on the link.
	Send(msg []byte) error
	// Receive blocks for the next datagram; it fails once closed.
	Receive(buf []byte) (int, netip.AddrPort, error)
	Close() error
	String() string
}

// Drainer is implemented by transports that hand over every datagram
// already queued in one wake-up of the receiving goroutine. A wake-up (Go's
// netpoller parking and unparking the goroutine, futex calls) costs several
// µs, far more than reading and rejecting one datagram, so under a flood
// the receiver pauses between drains and reads the datagrams that queued up
// meanwhile in one go (Node, floodPause).
type Drainer interface {
	// Drain blocks until at least one datagram is queued, then calls fn
	// for each of the queued datagrams it takes (msg is only valid during
	// the call) and returns how many it handed over.
	Drain(fn func(msg []byte, from netip.AddrPort)) (int, error)
}

// Pender is implemented by transports that can tell whether a datagram
// waits unread in the socket: Node judges no peer missing while statuses
// may be among the unread ones (Node.expireTick).
type Pender interface {
	Pending() (bool, error)
}

// rcvBuf is the socket receive buffer asked for (SO_RCVBUFFORCE as root,
// else SO_RCVBUF up to net.core.rmem_max): room for ≈ 1,000 datagrams, so
// that a flood of 100,000 datagrams/s does not overflow it between two
// drains 5 ms apart and push honest status messages out.
const rcvBuf = 1 << 20

// UDPTransport is a UDP socket bound to one interface that sends to a
// broadcast or multicast destination on it.
type UDPTransport struct {
	conn *net.UDPConn
	desc string
	// refresh, if set, recomputes the destination after a failed send
	// (the interface's address may have changed).
	refresh func() (netip.AddrPort, error)

	mu        sync.Mutex
	dst       netip.AddrPort
	refreshed time.Time

	raw *rawSock // the detached socket (nil: conn, through Go's netpoller)
}

// refreshEvery is how often Send re-reads the interface's address even
// without failures (DHCP may move the terminal to another subnet).
const refreshEvery = 10 * time.Second

// Send implements Transport. After a failure it recomputes the destination
// once (IPv4: the interface's broadcast address may have changed) and
// retries.
func (u *UDPTransport) Send(msg []byte) error {
	if u.refresh != nil {
		u.mu.Lock()
		stale := time.Since(u.refreshed) > refreshEvery
		u.mu.Unlock()
		if stale {
			u.refreshDst()
		}
	}
	dst := u.Destination()
	err := u.sendTo(msg, dst)
	if err != nil && u.refresh != nil {
		if nd := u.refreshDst(); nd != dst {
			dst = nd
			err = u.sendTo(msg, dst)
		}
	}
	if err != nil {
		return fmt.Errorf("send peer message to %v: %w", dst, err)
	}
	return nil
}

// Receive implements Transport.
func (u *UDPTransport) Receive(buf []byte) (int, netip.AddrPort, error) {
	if u.raw != nil {
		return u.raw.receive(buf)
	}
	return u.conn.ReadFromUDPAddrPort(buf)
}

// sendTo sends one datagram on whichever socket the transport has.
func (u *UDPTransport) sendTo(msg []byte, dst netip.AddrPort) error {
	if u.raw != nil {
		return u.raw.sendTo(msg, dst)
	}
	_, err := u.conn.WriteToUDPAddrPort(msg, dst)
	return err
}

// Drain implements Drainer. On a detached socket (ListenBroadcast4,
// ListenMulticast6: see rawSock) it blocks in recvmmsg(2) and hands over up
// to 64 datagrams per call; otherwise it reads one datagram through Go's
// netpoller.
func (u *UDPTransport) Drain(fn func(msg []byte, from netip.AddrPort)) (int, error) {
	if u.raw != nil {
		return u.raw.drain(fn)
	}
	var buf [MaxMessageSize + 1]byte
	n, from, err := u.conn.ReadFromUDPAddrPort(buf[:])
	if err != nil {
		return 0, err
	}
	fn(buf[:n], from)
	return 1, nil
}

// Pending implements Pender: whether a datagram is queued in the socket
// (SIOCINQ).
func (u *UDPTransport) Pending() (bool, error) {
	if u.raw != nil {
		return u.raw.pending()
	}
	rc, err := u.conn.SyscallConn()
	if err != nil {
		return false, err
	}
	n, ierr := 0, error(nil)
	if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); err != nil {
		return false, err
	}
	return n > 0, ierr
}

func (u *UDPTransport) refreshDst() netip.AddrPort {
	nd, err := u.refresh()
	u.mu.Lock()
	defer u.mu.Unlock()
	u.refreshed = time.Now()
	if err == nil {
		u.dst = nd
	}
	return u.dst
}

// Close implements Transport.
func (u *UDPTransport) Close() error {
	if u.raw != nil {
		return u.raw.close()
	}
	return u.conn.Close()
}

// Destination returns where Send sends.
func (u *UDPTransport) Destination() netip.AddrPort {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.dst
}

// LocalPort returns the bound UDP port.
func (u *UDPTransport) LocalPort() int {
	if u.raw != nil {
		return u.raw.localPort()
	}
	return u.conn.LocalAddr().(*net.UDPAddr).Port
}

func (u *UDPTransport) String() string { return u.desc }

// AttachAdmission attaches the kernel-side admission filter (package
// peer/admit) to the transport's socket. It fails on a transport that was
// not detached from Go's netpoller or where BPF is not permitted; the
// transport then works as before, reading every datagram.
func (u *UDPTransport) AttachAdmission(cfg admit.Config) (*admit.Filter, error) {
	if u.raw == nil {
		return nil, errors.New("admission filter: the transport's socket is not detached")
	}
	return admit.Attach(u.raw.fd, cfg)
}

func control(iface string, broadcast bool) func(string, string, syscall.RawConn) error {
	return func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); serr != nil {
				serr = fmt.Errorf("SO_REUSEADDR: %w", serr)
				return
			}
			// A larger receive buffer (best effort: the default stays if
			// both fail).
			if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvBuf) != nil {
				_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, rcvBuf)
			}
			if broadcast {
				if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_BROADCAST, 1); serr != nil {
					serr = fmt.Errorf("SO_BROADCAST: %w", serr)
					return
				}
			}
			if serr = unix.BindToDevice(int(fd), iface); serr != nil {
				serr = fmt.Errorf("SO_BINDTODEVICE %s: %w (needs CAP_NET_RAW on older kernels)", iface, serr)
			}
		})
		return errors.Join(err, serr)
	}
}

func checkPort(port int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("peer port %d outside 1..65535", port)
	}
	return nil
}

// ListenBroadcast4 opens the IPv4 broadcast transport on iface: a UDP
// socket on 0.0.0.0:port bound to the interface (SO_BINDTODEVICE) with
// SO_BROADCAST, sending to the interface's directed broadcast address (the
// first IPv4 address's subnet broadcast), or 255.255.255.255 when it has
// only a /31 or /32.
func ListenBroadcast4(iface string, port int) (*UDPTransport, error) {
	if err := checkPort(port); err != nil {
		return nil, err
	}
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("peer transport: interface %q: %w", iface, err)
	}
	bcast, err := broadcastAddr(ifi)
	if err != nil {
		return nil, err
	}
	lc := net.ListenConfig{Control: control(iface, true)}
	pc, err := lc.ListenPacket(context.Background(), "udp4", fmt.Sprintf("0.0.0.0:%d", port))
	if err != nil {
		return nil, fmt.Errorf("peer transport: listen udp4 port %d on %s: %w", port, iface, err)
	}
	dst := netip.AddrPortFrom(bcast, uint16(port))
	raw, err := detach(pc.(*net.UDPConn), 0)
	if err != nil {
		pc.Close()
		return nil, fmt.Errorf("peer transport: %w", err)
	}
	// The refresh asks the socket itself (ioctl), so it reads the
	// interface in the socket's network namespace whatever thread runs it.
	refresh := func() (netip.AddrPort, error) {
		b, err := socketBroadcastAddr(raw.fd, iface)
		return netip.AddrPortFrom(b, uint16(port)), err
	}
	return &UDPTransport{raw: raw, dst: dst, refresh: refresh, refreshed: time.Now(), desc: fmt.Sprintf("udp4 broadcast %v on %s", dst, iface)}, nil
}

func broadcastAddr(ifi *net.Interface) (netip.Addr, error) {
	addrs, err := ifi.Addrs()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("peer transport: addresses of %s: %w", ifi.Name, err)
	}
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.To4() == nil {
			continue
		}
		ip4, mask := ipn.IP.To4(), ipn.Mask
		if len(mask) == net.IPv6len {
			mask = mask[12:]
		}
		ones, _ := ipn.Mask.Size()
		if ones >= 31 {
			return netip.AddrFrom4([4]byte{255, 255, 255, 255}), nil
		}
		var b [4]byte
		for i := range b {
			b[i] = ip4[i] | ^mask[i]
		}
		return netip.AddrFrom4(b), nil
	}
	return netip.Addr{}, fmt.Errorf("peer transport: interface %s has no IPv4 address; address it first or use the IPv6 transport", ifi.Name)
}

// socketBroadcastAddr returns the broadcast address of iface's primary IPv4
// address, read with SIOCGIFADDR/SIOCGIFNETMASK on the socket fd.
func socketBroadcastAddr(fd int, iface string) (netip.Addr, error) {
	ifr, err := unix.NewIfreq(iface)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("peer transport: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFADDR, ifr); err != nil {
		return netip.Addr{}, fmt.Errorf("peer transport: address of %s: %w", iface, err)
	}
	addr, err := ifr.Inet4Addr()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("peer transport: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFNETMASK, ifr); err != nil {
		return netip.Addr{}, fmt.Errorf("peer transport: netmask of %s: %w", iface, err)
	}
	mask, err := ifr.Inet4Addr()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("peer transport: %w", err)
	}
	if ones, _ := net.IPMask(mask).Size(); ones >= 31 {
		return netip.AddrFrom4([4]byte{255, 255, 255, 255}), nil
	}
	var b [4]byte
	for i := range b {
		b[i] = addr[i] | ^mask[i]
	}
	return netip.AddrFrom4(b), nil
}

// ListenMulticast6 opens the IPv6 link-local multicast transport on iface:
// a UDP socket on [::]:port bound to the interface, joined to group (a
// link-local multicast address, DefaultGroup6 if invalid) on it, with hop
// limit 1, sending to [group%iface]:port. The interface needs an IPv6
// link-local address (it has one once up and past duplicate address
// detection).
func ListenMulticast6(iface string, port int, group netip.Addr) (*UDPTransport, error) {
	if err := checkPort(port); err != nil {
		return nil, err
	}
	if !group.IsValid() {
		group = DefaultGroup6
	}
	if !group.Is6() || !group.IsLinkLocalMulticast() {
		return nil, fmt.Errorf("peer transport: %v is not an IPv6 link-local multicast group (ff02::/16)", group)
	}
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("peer transport: interface %q: %w", iface, err)
	}
	lc := net.ListenConfig{Control: control(iface, false)}
	pc, err := lc.ListenPacket(context.Background(), "udp6", fmt.Sprintf("[::]:%d", port))
	if err != nil {
		return nil, fmt.Errorf("peer transport: listen udp6 port %d on %s: %w", port, iface, err)
	}
	conn := pc.(*net.UDPConn)
	rc, err := conn.SyscallConn()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("peer transport: %w", err)
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		mreq := &unix.IPv6Mreq{Multiaddr: group.As16(), Interface: uint32(ifi.Index)}
		if serr = unix.SetsockoptIPv6Mreq(int(fd), unix.IPPROTO_IPV6, unix.IPV6_JOIN_GROUP, mreq); serr != nil {
			serr = fmt.Errorf("join %v on %s: %w", group, iface, serr)
			return
		}
		if serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_IF, ifi.Index); serr != nil {
			serr = fmt.Errorf("IPV6_MULTICAST_IF %s: %w", iface, serr)
			return
		}
		if serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_HOPS, 1); serr != nil {
			serr = fmt.Errorf("IPV6_MULTICAST_HOPS: %w", serr)
		}
	})
	if err = errors.Join(err, serr); err != nil {
		conn.Close()
		return nil, fmt.Errorf("peer transport: %w", err)
	}
	dst := netip.AddrPortFrom(group.WithZone(iface), uint16(port))
	raw, err := detach(conn, uint32(ifi.Index))
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("peer transport: %w", err)
	}
	return &UDPTransport{raw: raw, dst: dst, desc: fmt.Sprintf("udp6 multicast %v", dst)}, nil
}

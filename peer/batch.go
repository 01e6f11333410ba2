package peer

import (
	"net/netip"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// batchSize is how many datagrams one recvmmsg(2) call reads at most.
const batchSize = 64

// mmsghdr is struct mmsghdr (Go pads it as C does on every Linux ABI).
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
}

// batch is the receive state of recvmmsg: one buffer, address and header
// per slot, allocated once (the receive path allocates nothing per
// datagram).
type batch struct {
	bufs  [batchSize][MaxMessageSize + 1]byte // one more, so Decode sees oversize
	names [batchSize]unix.RawSockaddrInet6    // large enough for IPv4 and IPv6
	iovs  [batchSize]unix.Iovec
	hdrs  [batchSize]mmsghdr
}

func newBatch() *batch {
	b := &batch{}
	for i := range b.hdrs {
		b.iovs[i].Base = &b.bufs[i][0]
		b.iovs[i].SetLen(len(b.bufs[i]))
		b.hdrs[i].hdr.Iov = &b.iovs[i]
		b.hdrs[i].hdr.SetIovlen(1)
	}
	return b
}

// read calls recvmmsg once with flags (MSG_DONTWAIT: do not block;
// MSG_WAITFORONE: block for the first datagram only) and returns how many
// datagrams it read (EAGAIN when none came).
func (b *batch) read(fd int, flags int) (int, error) {
	for i := range b.hdrs {
		b.hdrs[i].hdr.Name = (*byte)(unsafe.Pointer(&b.names[i]))
		b.hdrs[i].hdr.Namelen = uint32(unsafe.Sizeof(b.names[i]))
		b.hdrs[i].hdr.Flags = 0
		b.hdrs[i].len = 0
	}
	for {
		n, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.hdrs[0])),
			uintptr(len(b.hdrs)), uintptr(flags), 0, 0)
		switch errno {
		case 0:
			return int(n), nil
		case unix.EINTR:
			continue
		default:
			return 0, errno
		}
	}
}

// msg returns datagram i of the last read and its source.
func (b *batch) msg(i int) ([]byte, netip.AddrPort) {
	return b.bufs[i][:b.hdrs[i].len], sockaddrOf(&b.names[i])
}

// sockaddrOf converts a raw socket address without allocating (an IPv6
// zone is kept as its interface index).
func sockaddrOf(sa *unix.RawSockaddrInet6) netip.AddrPort {
	switch sa.Family {
	case unix.AF_INET:
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), ntohs(sa4.Port))
	case unix.AF_INET6:
		ip := netip.AddrFrom16(sa.Addr)
		if sa.Scope_id != 0 {
			ip = ip.WithZone(strconv.FormatUint(uint64(sa.Scope_id), 10))
		}
		return netip.AddrPortFrom(ip, ntohs(sa.Port))
	}
	return netip.AddrPort{}
}

// ntohs reads a port stored in network byte order.
func ntohs(p uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(&p))
	return uint16(b[0])<<8 | uint16(b[1])
}

package peer

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// rawSock is a UDP socket taken out of Go's netpoller: a blocking file
// descriptor read by recvmmsg(2) on the receiving goroutine's thread.
//
// Why: Go registers every socket with epoll edge-triggered, and every
// datagram that arrives raises an edge that wakes the runtime's poller
// thread, whether or not a goroutine waits on the socket. Under a flood of
// 10,000 datagrams/s that was ≈ 6,000 context switches/s and ≈ 10 µs of CPU
// per datagram, however few times the receiver itself woke up. Detached,
// the socket wakes only its own blocked recvmmsg, which then takes every
// queued datagram at once (and the receiver can pause in between:
// Node.drainLoop).
type rawSock struct {
	fd      int
	closing atomic.Bool
	recvMu  sync.Mutex // held around each receive syscall; Close waits for it
	batch   *batch
	zone    uint32 // interface index for link-local destinations
}

// recvTimeout bounds one blocking receive, so that the receiver sees Close
// even if shutdown(2) did not wake it.
const recvTimeout = 250 * time.Millisecond

// sendTimeout bounds a send on the blocking socket.
const sendTimeout = 100 * time.Millisecond

// detach turns conn into a rawSock: it duplicates the descriptor, closes
// conn (which removes it from Go's epoll set) and makes the duplicate
// blocking with receive and send timeouts.
func detach(conn *net.UDPConn, zone uint32) (*rawSock, error) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(f uintptr) { fd, derr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, fmt.Errorf("dup socket: %w", derr)
	}
	if err := conn.Close(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := setBlocking(fd); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &rawSock{fd: fd, batch: newBatch(), zone: zone}, nil
}

func setBlocking(fd int) error {
	if err := unix.SetNonblock(fd, false); err != nil {
		return fmt.Errorf("blocking socket: %w", err)
	}
	rt, st := unix.NsecToTimeval(recvTimeout.Nanoseconds()), unix.NsecToTimeval(sendTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &rt); err != nil {
		return fmt.Errorf("SO_RCVTIMEO: %w", err)
	}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &st); err != nil {
		return fmt.Errorf("SO_SNDTIMEO: %w", err)
	}
	return nil
}

// sendTo sends one datagram.
func (s *rawSock) sendTo(msg []byte, dst netip.AddrPort) error {
	var sa unix.Sockaddr
	if dst.Addr().Is4() {
		sa = &unix.SockaddrInet4{Port: int(dst.Port()), Addr: dst.Addr().As4()}
	} else {
		sa = &unix.SockaddrInet6{Port: int(dst.Port()), Addr: dst.Addr().As16(), ZoneId: s.zone}
	}
	for {
		err := unix.Sendto(s.fd, msg, 0, sa)
		if err != unix.EINTR {
			return err
		}
	}
}

// maxDrain bounds the datagrams one drain hands over, so that a flood
// cannot keep the receiver from looking at Close.
const maxDrain = 4096

// drain blocks until datagrams are queued (or the timeout passes: it then
// tries again), then reads every queued datagram — recvmmsg(2) batches of
// up to 64, the first blocking, the following ones not — up to maxDrain,
// and hands them to fn. It returns net.ErrClosed once Close was called.
func (s *rawSock) drain(fn func(msg []byte, from netip.AddrPort)) (int, error) {
	total, flags := 0, unix.MSG_WAITFORONE
	for total < maxDrain {
		s.recvMu.Lock()
		if s.closing.Load() {
			s.recvMu.Unlock()
			return total, net.ErrClosed
		}
		k, err := s.batch.read(s.fd, flags)
		if err == nil {
			for i := 0; i < k; i++ {
				fn(s.batch.msg(i))
			}
		}
		s.recvMu.Unlock()
		switch {
		case total > 0 && (err == unix.EAGAIN || (err == nil && k < batchSize)):
			return total + k, nil // the queue is empty
		case err == unix.EAGAIN || err == unix.EINTR || (err == nil && k == 0):
			continue // timeout or shutdown: look at closing again
		case err != nil:
			return total, fmt.Errorf("recvmmsg: %w", err)
		}
		total += k
		if k < batchSize {
			return total, nil
		}
		flags = unix.MSG_DONTWAIT // a full batch: more may be queued
	}
	return total, nil
}

// receive reads one datagram (Transport.Receive on a detached socket).
func (s *rawSock) receive(buf []byte) (int, netip.AddrPort, error) {
	for {
		s.recvMu.Lock()
		if s.closing.Load() {
			s.recvMu.Unlock()
			return 0, netip.AddrPort{}, net.ErrClosed
		}
		n, sa, err := unix.Recvfrom(s.fd, buf, 0)
		s.recvMu.Unlock()
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, netip.AddrPort{}, fmt.Errorf("recvfrom: %w", err)
		}
		return n, addrPortOf(sa), nil
	}
}

// close wakes a blocked receiver (shutdown), waits until it is out of its
// syscall and closes the descriptor, so that no receive ever runs on a
// descriptor number reused by someone else.
func (s *rawSock) close() error {
	if s.closing.Swap(true) {
		return nil
	}
	_ = unix.Shutdown(s.fd, unix.SHUT_RDWR) // ENOTCONN on unconnected UDP, but it wakes the reader
	s.recvMu.Lock()
	defer s.recvMu.Unlock()
	err := unix.Close(s.fd)
	s.fd = -1
	return err
}

// pending reports whether a datagram waits unread (SIOCINQ: the size of
// the next one). It takes no lock: the receiver holds recvMu while it
// blocks.
func (s *rawSock) pending() (bool, error) {
	if s.closing.Load() {
		return false, net.ErrClosed
	}
	n, err := unix.IoctlGetInt(s.fd, unix.SIOCINQ)
	return n > 0, err
}

// localPort returns the bound port.
func (s *rawSock) localPort() int {
	sa, err := unix.Getsockname(s.fd)
	if err != nil {
		return 0
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return a.Port
	case *unix.SockaddrInet6:
		return a.Port
	}
	return 0
}

// addrPortOf converts a socket address (invalid for other families).
func addrPortOf(sa unix.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port))
	}
	return netip.AddrPort{}
}

package monitor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/coopcc/coopcc/internal/nsenter"
	"golang.org/x/sys/unix"
)

const (
	nlmsgHdrLen     = 16
	inetDiagReqLen  = 56
	inetDiagMsgLen  = 72
	inetDiagInfo    = 2 // INET_DIAG_INFO
	inetDiagCong    = 4 // INET_DIAG_CONG
	inetDiagSkmem   = 7 // INET_DIAG_SKMEMINFO
	skmemWmemQueued = 5 // SK_MEMINFO_WMEM_QUEUED index
	recvBufSize     = 64 << 10

	// defaultStates is what ss shows by default: every state except
	// LISTEN, SYN-RECV (incl. NEW-SYN-RECV), TIME-WAIT and CLOSE.
	defaultStates = (1<<13 - 1) &^ (1<<StateListen | 1<<StateSynRecv | 1<<StateNewSynRecv | 1<<StateTimeWait | 1<<StateClose | 1)
)

// Monitor dumps the TCP sockets of one network namespace. Create it with
// New; it holds two netlink sockets opened inside that namespace, so it can
// be used from any goroutine (calls are serialised).
type Monitor struct {
	opts   Options
	states uint32

	mu      sync.Mutex
	diagFD  int
	routeFD int
	seq     uint32
	buf     []byte
	req     [nlmsgHdrLen + inetDiagReqLen]byte
	ccNames map[string]string
	lastN   int

	ifaces       ifaceTable
	ifacesLoaded time.Time
}

// New opens the netlink sockets inside opts.Netns and checks, with one dump,
// that the kernel answers inet_diag requests for TCP.
func New(opts Options) (*Monitor, error) {
	for _, p := range []netip.Prefix{opts.Filter.Src, opts.Filter.Dst} {
		if p != (netip.Prefix{}) && !p.IsValid() {
			return nil, fmt.Errorf("invalid address prefix filter %v", p)
		}
	}
	m := &Monitor{
		opts:    opts,
		diagFD:  -1,
		routeFD: -1,
		buf:     make([]byte, recvBufSize),
		ccNames: map[string]string{},
		states:  defaultStates,
	}
	if len(opts.Filter.States) > 0 {
		m.states = 0
		for _, s := range opts.Filter.States {
			if s == 0 || s > StateNewSynRecv {
				return nil, fmt.Errorf("invalid TCP state %d in filter (valid: 1..12)", s)
			}
			m.states |= 1 << s
		}
	}
	err := nsenter.Do(opts.Netns, func() error {
		var err error
		m.diagFD, err = openNetlink(unix.NETLINK_SOCK_DIAG)
		if err != nil {
			return fmt.Errorf("open sock_diag netlink socket: %w", err)
		}
		m.routeFD, err = openNetlink(unix.NETLINK_ROUTE)
		if err != nil {
			return fmt.Errorf("open rtnetlink socket: %w", err)
		}
		return nil
	})
	if err != nil {
		m.Close()
		return nil, err
	}
	if _, err := m.Snapshot(); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

func openNetlink(proto int) (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return -1, err
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind: %w", err)
	}
	// A large receive buffer keeps a 10,000-socket dump from stalling.
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 1<<20)
	return fd, nil
}

// Close releases the netlink sockets.
func (m *Monitor) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for _, fd := range []*int{&m.diagFD, &m.routeFD} {
		if *fd >= 0 {
			errs = append(errs, unix.Close(*fd))
			*fd = -1
		}
	}
	return errors.Join(errs...)
}

// NetnsCookie returns the cookie of the monitored network namespace
// (SO_NETNS_COOKIE, Linux 5.14+), as used by the tracer to select events.
func (m *Monitor) NetnsCookie() (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.diagFD < 0 {
		return 0, errors.New("monitor is closed")
	}
	c, err := unix.GetsockoptUint64(m.diagFD, unix.SOL_SOCKET, unix.SO_NETNS_COOKIE)
	if err != nil {
		return 0, fmt.Errorf("get netns cookie: %w", err)
	}
	return c, nil
}

// Snapshot dumps the namespace's TCP sockets (IPv4, then IPv6) and returns
// the flows that pass the filter, in kernel order.
//
// The interface of a flow is the socket's bound device when it has one,
// else the interface that holds the flow's source address
// [interpretation: for an unbound socket this is the egress interface in
// every set-up with one address per interface, which is what the testbed
// builds; the interface table is re-read at most once a second].
func (m *Monitor) Snapshot() ([]Flow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.diagFD < 0 {
		return nil, errors.New("monitor is closed")
	}
	if time.Since(m.ifacesLoaded) > time.Second {
		if err := m.ifaces.load(m.routeFD, &m.seq, m.buf); err != nil {
			return nil, fmt.Errorf("read interfaces: %w", err)
		}
		m.ifacesLoaded = time.Now()
	}
	flows := make([]Flow, 0, m.lastN+m.lastN/8+8)
	for _, fam := range [2]uint8{unix.AF_INET, unix.AF_INET6} {
		var err error
		flows, err = m.dumpFamily(fam, flows)
		if err != nil {
			return nil, err
		}
	}
	m.lastN = len(flows)
	return flows, nil
}

func (m *Monitor) dumpFamily(family uint8, flows []Flow) ([]Flow, error) {
	m.seq++
	r := m.req[:]
	ne := binary.NativeEndian
	ne.PutUint32(r[0:], uint32(len(r)))
	ne.PutUint16(r[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(r[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(r[8:], m.seq)
	ne.PutUint32(r[12:], 0)
	q := r[nlmsgHdrLen:]
	clear(q)
	q[0] = family
	q[1] = unix.IPPROTO_TCP
	q[2] = 1<<(inetDiagInfo-1) | 1<<(inetDiagCong-1) | 1<<(inetDiagSkmem-1)
	ne.PutUint32(q[4:], m.states)
	if _, err := unix.Write(m.diagFD, r); err != nil {
		return flows, fmt.Errorf("send inet_diag request: %w", err)
	}
	err := readDump(m.diagFD, m.seq, m.buf, func(typ uint16, p []byte) {
		if typ != unix.SOCK_DIAG_BY_FAMILY || len(p) < inetDiagMsgLen {
			return
		}
		flows = append(flows, Flow{})
		f := &flows[len(flows)-1]
		if !m.decode(p, f) {
			flows = flows[:len(flows)-1]
		}
	})
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EPROTONOSUPPORT) || errors.Is(err, unix.EOPNOTSUPP) {
			return flows, fmt.Errorf("kernel has no inet_diag support for TCP (needs CONFIG_INET_DIAG and CONFIG_INET_TCP_DIAG, or `modprobe tcp_diag`): %w", err)
		}
		return flows, fmt.Errorf("inet_diag dump: %w", err)
	}
	return flows, nil
}

// decode fills f from one inet_diag_msg and its attributes and reports
// whether it is a flow (a socket with TCP info) that passes the user-space
// part of the filter.
func (m *Monitor) decode(p []byte, f *Flow) bool {
	ne := binary.NativeEndian
	family := p[0]
	f.State = p[1]
	sport := binary.BigEndian.Uint16(p[4:])
	dport := binary.BigEndian.Uint16(p[6:])
	var src, dst netip.Addr
	if family == unix.AF_INET {
		src = netip.AddrFrom4([4]byte(p[8:12]))
		dst = netip.AddrFrom4([4]byte(p[24:28]))
	} else {
		src = netip.AddrFrom16([16]byte(p[8:24])).Unmap()
		dst = netip.AddrFrom16([16]byte(p[24:40])).Unmap()
	}
	f.Src = netip.AddrPortFrom(src, sport)
	f.Dst = netip.AddrPortFrom(dst, dport)
	ifindex := ne.Uint32(p[40:])
	f.Cookie = uint64(ne.Uint32(p[44:])) | uint64(ne.Uint32(p[48:]))<<32

	flt := &m.opts.Filter
	if !flt.IncludeLoopback && (src.IsLoopback() || dst.IsLoopback() || src == dst) {
		return false
	}
	if flt.Port != 0 && sport != flt.Port && dport != flt.Port {
		return false
	}
	if flt.Src.IsValid() && !flt.Src.Contains(src) {
		return false
	}
	if flt.Dst.IsValid() && !flt.Dst.Contains(dst) {
		return false
	}
	if ifindex != 0 {
		f.Iface = m.ifaces.names[ifindex]
	} else {
		f.Iface = m.ifaces.byAddr[src]
	}
	if flt.Iface != "" && f.Iface != flt.Iface {
		return false
	}

	hasInfo := false
	for a := p[inetDiagMsgLen:]; len(a) >= 4; {
		l := int(ne.Uint16(a))
		typ := ne.Uint16(a[2:])
		if l < 4 || l > len(a) {
			break
		}
		v := a[4:l]
		switch typ {
		case inetDiagInfo:
			parseTCPInfo(v, f)
			hasInfo = true
		case inetDiagCong:
			f.CC = m.intern(cstring(v))
		case inetDiagSkmem:
			f.WmemQueued = u32at(v, 4*skmemWmemQueued)
		}
		al := (l + 3) &^ 3
		if al > len(a) {
			break
		}
		a = a[al:]
	}
	// A socket without TCP info is a time-wait mini socket: a closed
	// connection that inet_diag lists in FIN-WAIT-2 (its substate) or
	// TIME-WAIT, with no window and no counters — not a flow.
	return hasInfo
}

func cstring(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// intern returns a shared string for a CC name without allocating per flow.
func (m *Monitor) intern(b []byte) string {
	if s, ok := m.ccNames[string(b)]; ok {
		return s
	}
	s := string(b)
	m.ccNames[s] = s
	return s
}

// readDump reads one netlink dump answer (multipart, up to NLMSG_DONE) into
// buf and calls fn for every message of sequence seq.
func readDump(fd int, seq uint32, buf []byte, fn func(typ uint16, payload []byte)) error {
	ne := binary.NativeEndian
	for {
		n, err := unix.Read(fd, buf)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("read netlink: %w", err)
		}
		b := buf[:n]
		for len(b) >= nlmsgHdrLen {
			l := int(ne.Uint32(b))
			if l < nlmsgHdrLen || l > len(b) {
				return fmt.Errorf("malformed netlink message (length %d of %d)", l, len(b))
			}
			typ := ne.Uint16(b[4:])
			mseq := ne.Uint32(b[8:])
			p := b[nlmsgHdrLen:l]
			al := (l + 3) &^ 3
			if al > len(b) {
				al = len(b)
			}
			b = b[al:]
			if mseq != seq {
				continue // a stale answer to an earlier, abandoned request
			}
			switch typ {
			case unix.NLMSG_DONE:
				if len(p) >= 4 {
					if e := int32(ne.Uint32(p)); e < 0 {
						return unix.Errno(-e)
					}
				}
				return nil
			case unix.NLMSG_ERROR:
				if len(p) >= 4 {
					if e := int32(ne.Uint32(p)); e < 0 {
						return unix.Errno(-e)
					}
				}
				return nil
			default:
				fn(typ, p)
			}
		}
	}
}

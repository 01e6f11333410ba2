// Package monitor reads the kernel's per-socket TCP state (struct tcp_info,
// the congestion-control name and the socket memory counters) for every TCP
// flow of a network namespace with one netlink inet_diag dump per address
// family and poll, filters the flows, and writes them as time series.
//
// It is the "kernel monitoring tool" of the papers done with sock_diag
// instead of a kernel module: no per-flow system calls, no text parsing, no
// per-flow allocations beyond the returned slice.
package monitor

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// TCP states (include/net/tcp_states.h).
const (
	StateEstablished uint8 = 1
	StateSynSent     uint8 = 2
	StateSynRecv     uint8 = 3
	StateFinWait1    uint8 = 4
	StateFinWait2    uint8 = 5
	StateTimeWait    uint8 = 6
	StateClose       uint8 = 7
	StateCloseWait   uint8 = 8
	StateLastAck     uint8 = 9
	StateListen      uint8 = 10
	StateClosing     uint8 = 11
	StateNewSynRecv  uint8 = 12
)

var stateNames = [...]string{
	0: "UNKNOWN", 1: "ESTAB", 2: "SYN-SENT", 3: "SYN-RECV", 4: "FIN-WAIT-1", 5: "FIN-WAIT-2",
	6: "TIME-WAIT", 7: "CLOSE", 8: "CLOSE-WAIT", 9: "LAST-ACK", 10: "LISTEN", 11: "CLOSING",
	12: "NEW-SYN-RECV",
}

// StateName returns the ss-style name of a TCP state ("ESTAB", "LISTEN", ...).
func StateName(s uint8) string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "UNKNOWN"
}

// ParseState accepts an ss-style state name (case-insensitive; "established"
// and "estab" both work) and returns its number.
func ParseState(name string) (uint8, bool) {
	n := normState(name)
	for i, s := range stateNames {
		if i > 0 && normState(s) == n {
			return uint8(i), true
		}
	}
	if n == "established" {
		return StateEstablished, true
	}
	return 0, false
}

func normState(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
		if c == '_' {
			b[i] = '-'
		}
	}
	return string(b)
}

var caStateNames = [...]string{"Open", "Disorder", "CWR", "Recovery", "Loss"}

// CAStateName names a congestion-avoidance state (tcpi_ca_state).
func CAStateName(s uint8) string {
	if int(s) < len(caStateNames) {
		return caStateNames[s]
	}
	return "?"
}

// Flow is one TCP socket as the kernel reports it. Units are in the names'
// comments; times are converted from the kernel's microseconds.
type Flow struct {
	Src, Dst netip.AddrPort
	State    uint8  // TCP state, 1 = ESTABLISHED
	CC       string // INET_DIAG_CONG, e.g. "cubic"

	Cwnd, Ssthresh, MSS  uint32 // segments, segments, bytes
	SRTT, RTTVar, MinRTT time.Duration

	CAState uint8 // 0 Open 1 Disorder 2 CWR 3 Recovery 4 Loss

	Retransmits                         uint8  // retransmissions of the current segment (tcpi_retransmits)
	TotalRetrans, Lost, Sacked, Unacked uint32 // segments

	BytesSent, BytesAcked, BytesReceived uint64 // bytes
	Delivered                            uint64 // segments delivered (tcpi_delivered)
	// SegsIn and DataSegsIn count the segments received, all of them and
	// those carrying data (tcpi_segs_in, tcpi_data_segs_in): on an upload
	// their difference is the ACKs that reached this host.
	SegsIn, DataSegsIn uint32

	DeliveryRate, PacingRate uint64 // bytes/s
	AppLimited               bool   // the last delivery-rate sample was application-limited

	NotSent uint32 // bytes written by the application but not yet sent

	// The receive side (this host receiving from the remote sender):
	// RcvRTT is the kernel's receiver-side RTT estimate (tcpi_rcv_rtt, 0
	// until measured), RcvSpace the bytes the receiver expects per RTT
	// (autotuning's rcvq_space), RcvSsthresh the window's current growth
	// cap, RcvWnd the window last advertised (Linux 6.7+, else 0) and
	// SndWnd the window the remote end advertises (Linux 5.19+), all bytes.
	RcvMSS, RcvSsthresh, RcvSpace, RcvWnd, SndWnd uint32
	RcvRTT                                        time.Duration

	BusyTime, RwndLimited, SndbufLimited time.Duration

	WmemQueued uint32 // bytes queued in the send buffer (SK_MEMINFO_WMEM_QUEUED)
	Cookie     uint64 // socket cookie: stable flow id
	Iface      string // egress/bound interface when known (see Monitor)
}

// ParsePrefix parses a filter's address: a prefix (masked to its network)
// or a bare address, taken as the prefix of that one address. An
// IPv4-mapped IPv6 address (::ffff:10.0.0.1) is the IPv4 address it maps:
// the kernel reports IPv4 flows with 4-byte addresses, which a mapped
// prefix never contains. The agent's managed.dst and `coopcc mon`'s
// --src/--dst share it.
func ParsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q: not an address or prefix (e.g. 10.77.1.0/24 or 10.77.1.5): %w", s, err)
		}
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q: not an address or prefix (e.g. 10.77.1.0/24 or 10.77.1.5)", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// Filter selects flows. Zero values select everything (except loopback).
type Filter struct {
	// Iface keeps flows whose interface (Flow.Iface) is this one.
	Iface string
	// Src and Dst keep flows whose local / remote address is inside the prefix.
	Src, Dst netip.Prefix
	// Port keeps flows whose local or remote port is Port.
	Port uint16
	// States keeps flows in these TCP states (filtered by the kernel). Empty
	// means the connected states, like ss: everything but LISTEN, SYN-RECV,
	// TIME-WAIT and CLOSE.
	States []uint8
	// IncludeLoopback keeps flows over loopback (127/8, ::1, or a host
	// talking to its own address), which are dropped by default.
	IncludeLoopback bool
}

// Options configure a Monitor.
type Options struct {
	// Netns is the network namespace: "" = the caller's current one, a name
	// as in `ip netns list`, or a path such as /proc/PID/ns/net.
	Netns  string
	Filter Filter
}

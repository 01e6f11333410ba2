package agent

// TEMPORARY: minimal copies of the BRIEF.md contract types of monitor,
// datapath, policy and peer, until those packages land in main. Each becomes
// an alias (type Flow = monitor.Flow, ...) and this file is deleted.

import (
	"net/netip"
	"time"
)

// Flow is monitor.Flow.
type Flow struct {
	Src, Dst                                        netip.AddrPort
	State                                           uint8
	CC                                              string
	Cwnd, Ssthresh, MSS                             uint32
	SRTT, RTTVar, MinRTT                            time.Duration
	CAState                                         uint8
	Retransmits                                     uint8
	TotalRetrans, Lost, Sacked, Unacked             uint32
	BytesSent, BytesAcked, BytesReceived, Delivered uint64
	DeliveryRate, PacingRate                        uint64
	AppLimited                                      bool
	NotSent                                         uint32
	BusyTime, RwndLimited, SndbufLimited            time.Duration
	WmemQueued                                      uint32
	Cookie                                          uint64
	Iface                                           string
}

// DPBounds is datapath.Bounds.
type DPBounds struct{ Lo, Hi uint32 }

// DPCounters is datapath.Counters.
type DPCounters struct{ LoApplied, HiApplied uint64 }

// FlowView is policy.FlowView.
type FlowView struct {
	Dst          netip.Addr
	Cwnd, MSS    uint32
	SRTT, MinRTT time.Duration
	DeliveryRate float64
	AppLimited   bool
}

// PeerView is policy.PeerView.
type PeerView struct {
	ActiveFlows  int
	SRTT, MinRTT time.Duration
	DeliveryRate float64
	Demand       uint64
	AppLimited   bool
	Capability   float64
	Lo, Hi       uint32
}

// View is policy.View.
type View struct {
	Now   time.Time
	Flows []FlowView
	Peers []PeerView
}

// PBounds is policy.Bounds.
type PBounds struct{ Lo, Hi uint32 }

// Decision is policy.Decision.
type Decision struct {
	Active  bool
	Default PBounds
	PerDst  map[netip.Addr]PBounds
	Reason  string
}

// Policy is policy.Policy.
type Policy interface {
	Name() string
	Decide(View) Decision
}

// PeerStatus is peer.Status.
type PeerStatus struct {
	Sender       uint64
	Seq          uint64
	SentAt       time.Time
	Leaving      bool
	ActiveFlows  uint32
	Cwnd         uint32
	SRTT         time.Duration
	MinRTT       time.Duration
	DeliveryRate uint64
	Demand       uint64
	AppLimited   bool
	Capability   uint64
	Lo, Hi       uint32
	Policy       string
}

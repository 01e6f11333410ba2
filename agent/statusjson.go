package agent

import (
	"fmt"
	"time"
)

// PeerReport is one terminal's status as `coopcc agent status --json` shows
// it, in the conventions of `coopcc mon --json`: snake_case keys, units in
// the names (µs, bytes/s as _Bps, segments unsuffixed), sender ids as
// 16-digit hex strings (a 64-bit integer does not survive jq or JavaScript),
// and no zero value standing for "none": fields that do not apply are left
// out. docs/agent.md has an example.
type PeerReport struct {
	Sender       string     `json:"sender"` // "self" for this terminal
	Seq          uint64     `json:"seq,omitempty"`
	SentAt       *time.Time `json:"sent_at,omitempty"` // sender's clock; absent for self
	ActiveFlows  uint32     `json:"active_flows"`
	Cwnd         uint32     `json:"cwnd"`
	SRTTUs       *int64     `json:"srtt_us,omitempty"`    // absent when unknown
	MinRTTUs     *int64     `json:"min_rtt_us,omitempty"` // absent when unknown
	DeliveryRate uint64     `json:"delivery_rate_Bps"`
	DemandBytes  uint64     `json:"demand_bytes"`
	AppLimited   bool       `json:"app_limited"`
	Capability   uint64     `json:"capability_Bps,omitempty"` // absent when unknown
	Lo           uint32     `json:"lo"`                       // 0 = no lower bound
	Hi           uint32     `json:"hi"`                       // 0 = no upper bound
	Policy       string     `json:"policy"`
	// Downloads (absent when the terminal has none).
	DownFlows  uint32 `json:"down_flows,omitempty"`
	DownRate   uint64 `json:"down_rate_Bps,omitempty"`
	DownSRTTUs *int64 `json:"down_srtt_us,omitempty"`
	RcvHi      uint32 `json:"rcv_hi,omitempty"` // receive-window bound, segments
	// The queue per contender coop has learned (absent when none).
	QueueSegments uint32 `json:"queue_segments,omitempty"`
	// The probe the terminal announces as its group's probe leader: its
	// windows use plan_segments per contender in probe epoch plan_epoch
	// (absent when none; peer TLV 18), from plan_from evaluations into it
	// on (absent when 0, the epoch's start; peer TLV 19).
	PlanEpoch    uint32 `json:"plan_epoch,omitempty"`
	PlanSegments uint32 `json:"plan_segments,omitempty"`
	PlanFrom     uint32 `json:"plan_from,omitempty"`
	// How the terminal's group shares its capacity among its terminals
	// (peer TLV 20; each absent when false, equal rates): access_shares,
	// per access, the split its probe leader learned; plan_access_shares,
	// the announced plan's windows share per access in its epoch (a split
	// probe).
	AccessShares     bool `json:"access_shares,omitempty"`
	PlanAccessShares bool `json:"plan_access_shares,omitempty"`
	// The WLAN interface's PHY rate, kbit/s (absent when unknown).
	LinkRateKbps uint32 `json:"link_rate_kbps,omitempty"`
	// The WLAN interface's airtime over the sender's last interval, µs:
	// on the channel, busy, its own (absent when unknown; peer TLV 17).
	AirChannelUs uint32 `json:"air_channel_us,omitempty"`
	AirBusyUs    uint32 `json:"air_busy_us,omitempty"`
	AirOwnUs     uint32 `json:"air_own_us,omitempty"`
}

// peerReport converts a peer status (self when self is true).
func peerReport(s PeerStatus, self bool) PeerReport {
	r := PeerReport{Sender: "self", ActiveFlows: s.ActiveFlows, Cwnd: s.Cwnd, SRTTUs: usOrNil(s.SRTT),
		MinRTTUs: usOrNil(s.MinRTT), DeliveryRate: s.DeliveryRate, DemandBytes: s.Demand, AppLimited: s.AppLimited,
		Capability: s.Capability, Lo: s.Lo, Hi: s.Hi, Policy: s.Policy,
		DownFlows: s.DownFlows, DownRate: s.DownRate, DownSRTTUs: usOrNil(s.DownSRTT), RcvHi: s.RcvHi,
		QueueSegments: s.QueueSegments, PlanEpoch: s.PlanEpoch, PlanSegments: s.PlanSegments, PlanFrom: s.PlanFrom,
		AccessShares: s.AccessShares, PlanAccessShares: s.PlanAccessShares, LinkRateKbps: s.LinkRate,
		AirChannelUs: s.AirChannel, AirBusyUs: s.AirBusy, AirOwnUs: s.AirOwn}
	if !self {
		r.Sender = SenderID(s.Sender)
		r.Seq = s.Seq
		if !s.SentAt.IsZero() {
			t := s.SentAt
			r.SentAt = &t
		}
	}
	return r
}

// SenderID formats a peer sender id as the status, logs and events show it.
func SenderID(id uint64) string { return fmt.Sprintf("%016x", id) }

func usOrNil(d time.Duration) *int64 {
	if d <= 0 {
		return nil
	}
	us := d.Microseconds()
	return &us
}

// usString formats an optional µs value for the text table ("-" = unknown).
func usString(us *int64) string {
	if us == nil {
		return "-"
	}
	return (time.Duration(*us) * time.Microsecond).String()
}

package peer

import (
	"fmt"
	"strconv"
	"time"
)

// Fields is a Status in the JSON form of the protocol's test vectors
// (testdata/vectors.json) and of `coopcc peer decode` / `coopcc peer encode`:
// snake_case keys with the unit in the name, 64-bit integers as decimal
// strings (the sender id as hex) so that readers whose JSON numbers are
// float64 (jq, JavaScript, Python's json with floats) keep them exact.
type Fields struct {
	Sender       string `json:"sender_hex"`
	Seq          string `json:"seq"`
	SentAtNs     string `json:"sent_at_unix_ns"`
	Leaving      bool   `json:"leaving"`
	ActiveFlows  uint32 `json:"active_flows"`
	Cwnd         uint32 `json:"cwnd_segments"`
	SRTTus       uint32 `json:"srtt_us"`
	MinRTTus     uint32 `json:"min_rtt_us"`
	DeliveryRate string `json:"delivery_rate_Bps"`
	Demand       string `json:"demand_bytes"`
	AppLimited   bool   `json:"app_limited"`
	Capability   string `json:"capability_Bps"`
	Lo           uint32 `json:"bound_lo_segments"`
	Hi           uint32 `json:"bound_hi_segments"`
	Policy       string `json:"policy"`
	// Downloads (TLVs 11-14); omitted from the JSON when all zero.
	DownFlows  uint32 `json:"down_flows,omitempty"`
	DownRate   string `json:"down_rate_Bps,omitempty"`
	DownSRTTus uint32 `json:"down_srtt_us,omitempty"`
	RcvHi      uint32 `json:"rcv_hi_segments,omitempty"`
	// The learned queue per contender (TLV 15); omitted when 0.
	QueueSegments uint32 `json:"queue_segments,omitempty"`
	// The probe the sender announces (TLV 18): segments per contender in
	// a wall-clock probe epoch; omitted when none.
	PlanEpoch    uint32 `json:"plan_epoch,omitempty"`
	PlanSegments uint32 `json:"plan_segments,omitempty"`
	// The evaluation into that epoch the plan takes force from (TLV 19);
	// omitted when 0, the epoch's start.
	PlanFrom uint32 `json:"plan_from,omitempty"`
	// How the sender's group shares its capacity (TLV 20): per access
	// (bit 0), and the plan's windows per access (bit 1, a split probe);
	// each omitted when false (equal rates).
	AccessShares     bool `json:"access_shares,omitempty"`
	PlanAccessShares bool `json:"plan_access_shares,omitempty"`
	// The WLAN interface's transmit rate (TLV 16), kbit/s; omitted when 0.
	LinkRateKbps uint32 `json:"link_rate_kbps,omitempty"`
	// The airtime counters of the sender's last interval (TLV 17), µs;
	// each omitted when 0 (all three when the channel time is 0).
	AirChannelUs uint32 `json:"air_channel_us,omitempty"`
	AirBusyUs    uint32 `json:"air_busy_us,omitempty"`
	AirOwnUs     uint32 `json:"air_own_us,omitempty"`
}

// FieldsOf returns s in the vectors' JSON form (durations in whole µs, as
// on the wire).
func FieldsOf(s Status) Fields {
	f := Fields{
		Sender: strconv.FormatUint(s.Sender, 16), Seq: strconv.FormatUint(s.Seq, 10),
		SentAtNs: strconv.FormatInt(s.SentAt.UnixNano(), 10), Leaving: s.Leaving,
		ActiveFlows: s.ActiveFlows, Cwnd: s.Cwnd,
		SRTTus: uint32(s.SRTT / time.Microsecond), MinRTTus: uint32(s.MinRTT / time.Microsecond),
		DeliveryRate: strconv.FormatUint(s.DeliveryRate, 10), Demand: strconv.FormatUint(s.Demand, 10),
		AppLimited: s.AppLimited, Capability: strconv.FormatUint(s.Capability, 10),
		Lo: s.Lo, Hi: s.Hi, Policy: s.Policy, QueueSegments: s.QueueSegments, PlanEpoch: s.PlanEpoch, PlanSegments: s.PlanSegments, PlanFrom: s.PlanFrom,
		AccessShares: s.AccessShares, PlanAccessShares: s.PlanAccessShares, LinkRateKbps: s.LinkRate,
		AirChannelUs: s.AirChannel, AirBusyUs: s.AirBusy, AirOwnUs: s.AirOwn,
	}
	if s.hasDownloads() {
		f.DownFlows, f.DownRate = s.DownFlows, strconv.FormatUint(s.DownRate, 10)
		f.DownSRTTus, f.RcvHi = uint32(s.DownSRTT/time.Microsecond), s.RcvHi
	}
	return f
}

// Status converts the JSON form back; an integer field that does not parse
// is an error naming the field.
func (f Fields) Status() (Status, error) {
	var err error
	u := func(name, v string, base int) uint64 {
		if err != nil || (v == "" && name == "down_rate_Bps") {
			return 0
		}
		n, e := strconv.ParseUint(v, base, 64)
		if e != nil {
			err = fmt.Errorf("field %s: %q is not a base-%d unsigned integer", name, v, base)
		}
		return n
	}
	s := Status{
		Sender: u("sender_hex", f.Sender, 16), Seq: u("seq", f.Seq, 10),
		SentAt:  time.Unix(0, int64(u("sent_at_unix_ns", f.SentAtNs, 10))),
		Leaving: f.Leaving, ActiveFlows: f.ActiveFlows, Cwnd: f.Cwnd,
		SRTT: time.Duration(f.SRTTus) * time.Microsecond, MinRTT: time.Duration(f.MinRTTus) * time.Microsecond,
		DeliveryRate: u("delivery_rate_Bps", f.DeliveryRate, 10), Demand: u("demand_bytes", f.Demand, 10),
		AppLimited: f.AppLimited, Capability: u("capability_Bps", f.Capability, 10),
		Lo: f.Lo, Hi: f.Hi, Policy: f.Policy,
		DownFlows: f.DownFlows, DownRate: u("down_rate_Bps", f.DownRate, 10),
		DownSRTT: time.Duration(f.DownSRTTus) * time.Microsecond, RcvHi: f.RcvHi,
		QueueSegments: f.QueueSegments, PlanEpoch: f.PlanEpoch, PlanSegments: f.PlanSegments, PlanFrom: f.PlanFrom,
		AccessShares: f.AccessShares, PlanAccessShares: f.PlanAccessShares, LinkRate: f.LinkRateKbps,
		AirChannel: f.AirChannelUs, AirBusy: f.AirBusyUs, AirOwn: f.AirOwnUs,
	}
	return s, err
}

package peer

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"sync"
	"time"
)

// Wire-format constants (docs/protocol.md, section "Message").
const (
	Version        = 1  // protocol version this package speaks
	HeaderSize     = 40 // fixed header: magic .. send time
	TagSize        = 16 // truncated HMAC-SHA256 tag at the end of every message
	MinMessageSize = HeaderSize + TagSize
	MaxMessageSize = 512 // receivers reject longer datagrams; senders never exceed it

	FlagLeaving = 0x01 // the sender is shutting down: drop it now (goodbye)
)

// Magic is the first four bytes of every message: "CoCC".
var Magic = [4]byte{'C', 'o', 'C', 'C'}

// TLV types of version 1. Receivers skip TLVs of any other type.
const (
	TLVActiveFlows  = 1  // u32: TCP uploads in ESTABLISHED with data in flight
	TLVCwnd         = 2  // u32: sum of cwnd over the active uploads, segments
	TLVSRTT         = 3  // u32: smoothed RTT, microseconds
	TLVMinRTT       = 4  // u32: minimum RTT, microseconds
	TLVDeliveryRate = 5  // u64: aggregate delivery rate, bytes/s
	TLVDemand       = 6  // u64: bytes queued but not yet sent
	TLVAppLimited   = 7  // u8:  1 when all active uploads are application-limited
	TLVCapability   = 8  // u64: throughput when alone on the AP, bytes/s
	TLVBounds       = 9  // u32 lo, u32 hi: current cwnd bounds, segments (0 = none)
	TLVPolicy       = 10 // 0..32 bytes of [a-z0-9._-]: policy name
	// Downloads (added in version 1 as a compatible extension: receivers
	// that predate them skip them; senders omit all four when there is no
	// download and no receive bound).
	TLVDownFlows = 11 // u32: TCP downloads in ESTABLISHED receiving data
	TLVDownRate  = 12 // u64: aggregate receive rate of those downloads, bytes/s
	TLVDownSRTT  = 13 // u32: receive-side smoothed RTT of those downloads, microseconds
	TLVRcvHi     = 14 // u32: current receive-window bound, segments (0 = none)
	// TLVQueueSegments (a compatible extension of version 1; senders omit
	// it when 0): the queue per contender of the medium the sender's coop
	// policy has learned to work at, segments, so that the group converges
	// on one value (policy/coop_probe.go).
	TLVQueueSegments = 15 // u32, 0..MaxQueueSegments
	// TLVLinkRate (a compatible extension of version 1; senders omit it
	// when 0): the PHY rate the sender's WLAN interface transmits at, as its
	// driver reports it, kbit/s — so that the group can tell a medium that
	// slowed down (rate adaptation) from a queue someone else builds.
	TLVLinkRate = 16 // u32, 0..MaxLinkRate
	// TLVAirtime (a compatible extension of version 1; senders omit it when
	// the channel time is 0): the sender's airtime counters over its last
	// measurement interval, three u32 in microseconds — channel time, busy
	// time, own airtime (its transmissions and the frames sent to it) — so
	// that the group can sum its own airtime against the busy air and see
	// whether hosts without coopcc hold the medium.
	TLVAirtime = 17 // u32 channel ≤ MaxAirChannel, u32 busy ≤ channel, u32 own ≤ channel
	// TLVProbePlan (a compatible extension of version 1; senders omit it
	// when they announce no probe): the queue probe the sender announces as
	// its group's probe leader — its windows use the given segments per
	// contender in the given wall-clock probe epoch (policy.ProbePlan) — so
	// that the group's terminals make one probe at once (policy/coop_lead.go).
	TLVProbePlan = 18 // u32 epoch (any), u32 segments 1..MaxQueueSegments
	// TLVProbePlanFrom (a compatible extension of version 1; senders omit
	// it when 0, and send it only with TLVProbePlan): the number of
	// evaluations into the announced probe epoch from which the plan takes
	// force (policy.ProbePlan.From; 0 = the epoch's start) — so that a
	// leader can announce a probe in its epoch's second half (a chained
	// probe). Receivers that predate it skip it and take the plan to begin
	// at its epoch's start: they ignore a plan that begins later in it.
	TLVProbePlanFrom = 19 // u32 evaluations into the plan's epoch, 1..MaxPlanFrom
	// TLVShares (a compatible extension of version 1; senders omit it when
	// 0): how the sender's coop shares its group's capacity among the
	// group's terminals by weighted max-min — per access (each terminal
	// weighted by the frames one 802.11 access with aggregation carries for
	// it) instead of at equal rates. Bit 0 (SharesAccess): the group's
	// learned split, the one the sender uses (policy.Decision.Access); bit
	// 1 (SharesPlanAccess, only with TLVProbePlan): the announced probe
	// plan's windows use the per-access split in its epoch (a split probe,
	// policy.ProbePlan.Access). Receivers that predate it skip it: they
	// share at equal rates and follow a split probe's plan at equal rates.
	TLVShares = 20 // u32 flags: 1 = the sender's group shares per access, 2 = its probe plan's windows do (only with TLVProbePlan)
)

// The bits of TLVShares' value. Any other bit set is out of range.
const (
	SharesAccess     = 1 << 0 // the sender's group shares its capacity per access (its learned split)
	SharesPlanAccess = 1 << 1 // the sender's probe plan's windows share it per access (a split probe)
	sharesKnown      = SharesAccess | SharesPlanAccess
)

// Valid ranges (inclusive). A message with any field outside them is
// rejected with OutOfRange; Status.Clamp brings a local status inside them.
const (
	MaxActiveFlows   = 65535
	MaxCwnd          = 1_000_000 // segments
	MaxRTT           = 60 * time.Second
	MaxRate          = 12_500_000_000 // bytes/s = 100 Gbit/s
	MaxDemand        = 1 << 40        // bytes (1 TiB)
	MaxPolicyLength  = 32
	MaxQueueSegments = 65535
	MaxLinkRate      = 100_000_000 // kbit/s = 100 Gbit/s
	MaxAirChannel    = 60_000_000  // µs = 60 s of channel time per interval
	MaxPlanFrom      = 255         // evaluations into a probe plan's epoch
)

// Status is what a terminal tells its peers about itself.
type Status struct {
	Sender  uint64    // random per start, never 0; filled by Node
	Seq     uint64    // per sender, strictly increasing from 1; filled by Node
	SentAt  time.Time // sender's clock, nanoseconds on the wire; filled by Node
	Leaving bool      // goodbye: the sender stops now

	ActiveFlows  uint32        // active uploads (0 = idle: not counted in N)
	Cwnd         uint32        // aggregate cwnd of the active uploads, segments
	SRTT         time.Duration // representative smoothed RTT (µs resolution)
	MinRTT       time.Duration // smallest RTT seen (µs resolution)
	DeliveryRate uint64        // aggregate delivery rate, bytes/s
	Demand       uint64        // bytes waiting to be sent
	AppLimited   bool          // uploads limited by the application, not the network
	Capability   uint64        // throughput when alone, bytes/s (0 = unknown)
	Lo, Hi       uint32        // current cwnd bounds, segments (0 = no bound)
	Policy       string        // name of the policy in force

	DownFlows uint32        // active downloads (counted in N like uploads)
	DownRate  uint64        // aggregate receive rate of the downloads, bytes/s
	DownSRTT  time.Duration // receive-side smoothed RTT (µs resolution)
	RcvHi     uint32        // receive-window bound, segments (0 = none)

	QueueSegments uint32 // learned queue per contender, segments (0 = none)
	// PlanSegments segments per contender in probe epoch PlanEpoch: the
	// probe the sender announces (0 segments = none: the TLV is omitted).
	PlanEpoch, PlanSegments uint32
	// PlanFrom evaluations into epoch PlanEpoch the plan takes force (0 =
	// the epoch's start: TLV 19 is omitted; only with PlanSegments).
	PlanFrom uint32
	// AccessShares: the sender's group shares its capacity per access, the
	// split its probe leader learned (TLV 20 bit 0; false = equal rates).
	AccessShares bool
	// PlanAccessShares: the windows of the plan the sender announces share
	// the capacity per access in its epoch, a split probe (TLV 20 bit 1;
	// only with PlanSegments).
	PlanAccessShares bool
	LinkRate         uint32 // the WLAN interface's transmit rate, kbit/s (0 = unknown)

	AirChannel uint32 // µs on the channel over the sender's last interval (0 = unknown: the TLV is omitted)
	AirBusy    uint32 // µs of it the channel was busy
	AirOwn     uint32 // µs of it the sender's own airtime (its transmissions and the frames sent to it)
}

// hasDownloads reports whether the download TLVs are sent.
func (s Status) hasDownloads() bool {
	return s.DownFlows != 0 || s.DownRate != 0 || s.DownSRTT != 0 || s.RcvHi != 0
}

// Validate reports the first field outside its documented range.
func (s Status) Validate() error {
	switch {
	case s.Sender == 0:
		return errors.New("sender id is 0")
	case s.Seq == 0:
		return errors.New("sequence number is 0")
	case s.SentAt.UnixNano() <= 0:
		return fmt.Errorf("send time %v is not after 1970", s.SentAt)
	case s.ActiveFlows > MaxActiveFlows:
		return fmt.Errorf("active flows %d > %d", s.ActiveFlows, MaxActiveFlows)
	case s.Cwnd > MaxCwnd:
		return fmt.Errorf("cwnd %d > %d segments", s.Cwnd, MaxCwnd)
	case s.SRTT < 0 || s.SRTT > MaxRTT:
		return fmt.Errorf("srtt %v outside [0, %v]", s.SRTT, MaxRTT)
	case s.MinRTT < 0 || s.MinRTT > MaxRTT:
		return fmt.Errorf("min rtt %v outside [0, %v]", s.MinRTT, MaxRTT)
	case s.DeliveryRate > MaxRate:
		return fmt.Errorf("delivery rate %d > %d B/s", s.DeliveryRate, uint64(MaxRate))
	case s.Demand > MaxDemand:
		return fmt.Errorf("demand %d > %d bytes", s.Demand, uint64(MaxDemand))
	case s.Capability > MaxRate:
		return fmt.Errorf("capability %d > %d B/s", s.Capability, uint64(MaxRate))
	case s.Lo > MaxCwnd || s.Hi > MaxCwnd:
		return fmt.Errorf("bounds %d/%d > %d segments", s.Lo, s.Hi, MaxCwnd)
	case s.Hi != 0 && s.Lo > s.Hi:
		return fmt.Errorf("lower bound %d > upper bound %d", s.Lo, s.Hi)
	case s.DownFlows > MaxActiveFlows:
		return fmt.Errorf("download flows %d > %d", s.DownFlows, MaxActiveFlows)
	case s.DownRate > MaxRate:
		return fmt.Errorf("receive rate %d > %d B/s", s.DownRate, uint64(MaxRate))
	case s.DownSRTT < 0 || s.DownSRTT > MaxRTT:
		return fmt.Errorf("receive srtt %v outside [0, %v]", s.DownSRTT, MaxRTT)
	case s.RcvHi > MaxCwnd:
		return fmt.Errorf("receive bound %d > %d segments", s.RcvHi, MaxCwnd)
	case s.QueueSegments > MaxQueueSegments:
		return fmt.Errorf("queue per contender %d > %d segments", s.QueueSegments, MaxQueueSegments)
	case s.PlanSegments > MaxQueueSegments:
		return fmt.Errorf("probe plan of %d > %d segments", s.PlanSegments, MaxQueueSegments)
	case s.PlanSegments == 0 && s.PlanEpoch != 0:
		return fmt.Errorf("probe plan for epoch %d of 0 segments", s.PlanEpoch)
	case s.PlanFrom > MaxPlanFrom:
		return fmt.Errorf("probe plan from evaluation %d > %d", s.PlanFrom, MaxPlanFrom)
	case s.PlanSegments == 0 && s.PlanFrom != 0:
		return fmt.Errorf("probe plan from evaluation %d of 0 segments", s.PlanFrom)
	case s.PlanSegments == 0 && s.PlanAccessShares:
		return errors.New("probe plan shares per access of 0 segments")
	case s.LinkRate > MaxLinkRate:
		return fmt.Errorf("link rate %d > %d kbit/s", s.LinkRate, MaxLinkRate)
	case s.AirChannel > MaxAirChannel:
		return fmt.Errorf("air channel time %d > %d µs", s.AirChannel, MaxAirChannel)
	case s.AirBusy > s.AirChannel:
		return fmt.Errorf("air busy time %d > channel time %d µs", s.AirBusy, s.AirChannel)
	case s.AirOwn > s.AirChannel:
		return fmt.Errorf("own airtime %d > channel time %d µs", s.AirOwn, s.AirChannel)
	}
	return validPolicy(s.Policy)
}

func validPolicy(p string) error {
	if len(p) > MaxPolicyLength {
		return fmt.Errorf("policy name longer than %d bytes", MaxPolicyLength)
	}
	for i := 0; i < len(p); i++ {
		if !policyByte(p[i]) {
			return fmt.Errorf("policy name byte %#02x at %d not in [a-z0-9._-]", p[i], i)
		}
	}
	return nil
}

func policyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// Clamp returns s with every measured field forced into its valid range and
// the RTTs rounded to microseconds, so that a local status with an odd value
// (a 70 s srtt after a stall) is still sent. Bytes outside [a-z0-9._-] in
// the policy name become '_', and it is cut to MaxPolicyLength. Header fields
// (Sender, Seq, SentAt) are left alone.
func (s Status) Clamp() Status {
	s.ActiveFlows = min(s.ActiveFlows, MaxActiveFlows)
	s.Cwnd = min(s.Cwnd, MaxCwnd)
	s.SRTT = max(0, min(s.SRTT, MaxRTT)).Truncate(time.Microsecond)
	s.MinRTT = max(0, min(s.MinRTT, MaxRTT)).Truncate(time.Microsecond)
	s.DeliveryRate = min(s.DeliveryRate, MaxRate)
	s.Demand = min(s.Demand, MaxDemand)
	s.Capability = min(s.Capability, MaxRate)
	s.Lo, s.Hi = min(s.Lo, MaxCwnd), min(s.Hi, MaxCwnd)
	s.DownFlows = min(s.DownFlows, MaxActiveFlows)
	s.DownRate = min(s.DownRate, MaxRate)
	s.DownSRTT = max(0, min(s.DownSRTT, MaxRTT)).Truncate(time.Microsecond)
	s.RcvHi = min(s.RcvHi, MaxCwnd)
	s.QueueSegments = min(s.QueueSegments, MaxQueueSegments)
	s.PlanSegments = min(s.PlanSegments, MaxQueueSegments)
	s.PlanFrom = min(s.PlanFrom, MaxPlanFrom)
	if s.PlanSegments == 0 {
		s.PlanEpoch, s.PlanFrom, s.PlanAccessShares = 0, 0, false
	}
	s.LinkRate = min(s.LinkRate, MaxLinkRate)
	s.AirChannel = min(s.AirChannel, MaxAirChannel)
	s.AirBusy = min(s.AirBusy, s.AirChannel) // busy may be below own on some drivers: not clamped to each other
	s.AirOwn = min(s.AirOwn, s.AirChannel)
	if s.Hi != 0 && s.Lo > s.Hi {
		s.Lo = s.Hi
	}
	if len(s.Policy) > MaxPolicyLength {
		s.Policy = s.Policy[:MaxPolicyLength]
	}
	if validPolicy(s.Policy) != nil {
		b := []byte(s.Policy)
		for i, c := range b {
			if c >= 'A' && c <= 'Z' {
				b[i] = c + 'a' - 'A'
			} else if !policyByte(c) {
				b[i] = '_'
			}
		}
		s.Policy = string(b)
	}
	return s
}

// Codec encodes and authenticates messages of one group with one key. It is
// safe for concurrent use.
type Codec struct {
	key   Key
	group Group
	macs  sync.Pool // of *macState
}

type macState struct {
	h   hash.Hash // HMAC-SHA256 keyed with the codec's key
	sum [sha256.Size]byte
}

// NewCodec returns a codec for the group, authenticating with key.
func NewCodec(key Key, group Group) *Codec {
	c := &Codec{key: key, group: group}
	c.macs.New = func() any { return &macState{h: hmac.New(sha256.New, c.key[:])} }
	return c
}

// Group returns the codec's group identifier.
func (c *Codec) Group() Group { return c.group }

func (c *Codec) tag(dst, body []byte) []byte {
	m := c.macs.Get().(*macState)
	m.h.Reset()
	m.h.Write(body)
	dst = append(dst, m.h.Sum(m.sum[:0])[:TagSize]...)
	c.macs.Put(m)
	return dst
}

// Encode returns the message for s. It fails when s does not Validate.
func (c *Codec) Encode(s Status) ([]byte, error) {
	return c.AppendEncode(make([]byte, 0, 192), s)
}

// AppendEncode appends the message for s to dst.
func (c *Codec) AppendEncode(dst []byte, s Status) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return dst, fmt.Errorf("encode peer status: %w", err)
	}
	start := len(dst)
	var flags byte
	if s.Leaving {
		flags |= FlagLeaving
	}
	dst = append(dst, Magic[:]...)
	dst = append(dst, Version, flags, 0, 0) // length patched below
	dst = append(dst, c.group[:]...)
	dst = binary.BigEndian.AppendUint64(dst, s.Sender)
	dst = binary.BigEndian.AppendUint64(dst, s.Seq)
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.SentAt.UnixNano()))

	dst = appendU32(dst, TLVActiveFlows, s.ActiveFlows)
	dst = appendU32(dst, TLVCwnd, s.Cwnd)
	dst = appendU32(dst, TLVSRTT, uint32(s.SRTT/time.Microsecond))
	dst = appendU32(dst, TLVMinRTT, uint32(s.MinRTT/time.Microsecond))
	dst = appendU64(dst, TLVDeliveryRate, s.DeliveryRate)
	dst = appendU64(dst, TLVDemand, s.Demand)
	var al byte
	if s.AppLimited {
		al = 1
	}
	dst = append(dst, TLVAppLimited, 1, al)
	dst = appendU64(dst, TLVCapability, s.Capability)
	dst = append(dst, TLVBounds, 8)
	dst = binary.BigEndian.AppendUint32(dst, s.Lo)
	dst = binary.BigEndian.AppendUint32(dst, s.Hi)
	if s.Policy != "" {
		dst = append(dst, TLVPolicy, byte(len(s.Policy)))
		dst = append(dst, s.Policy...)
	}
	if s.hasDownloads() {
		dst = appendU32(dst, TLVDownFlows, s.DownFlows)
		dst = appendU64(dst, TLVDownRate, s.DownRate)
		dst = appendU32(dst, TLVDownSRTT, uint32(s.DownSRTT/time.Microsecond))
		dst = appendU32(dst, TLVRcvHi, s.RcvHi)
	}
	if s.QueueSegments != 0 {
		dst = appendU32(dst, TLVQueueSegments, s.QueueSegments)
	}
	if s.LinkRate != 0 {
		dst = appendU32(dst, TLVLinkRate, s.LinkRate)
	}
	if s.AirChannel != 0 {
		dst = append(dst, TLVAirtime, 12)
		dst = binary.BigEndian.AppendUint32(dst, s.AirChannel)
		dst = binary.BigEndian.AppendUint32(dst, s.AirBusy)
		dst = binary.BigEndian.AppendUint32(dst, s.AirOwn)
	}
	if s.PlanSegments != 0 {
		dst = append(dst, TLVProbePlan, 8)
		dst = binary.BigEndian.AppendUint32(dst, s.PlanEpoch)
		dst = binary.BigEndian.AppendUint32(dst, s.PlanSegments)
	}
	if s.PlanSegments != 0 && s.PlanFrom != 0 {
		dst = appendU32(dst, TLVProbePlanFrom, s.PlanFrom)
	}
	if sh := s.shares(); sh != 0 {
		dst = appendU32(dst, TLVShares, sh)
	}
	total := len(dst) - start + TagSize
	binary.BigEndian.PutUint16(dst[start+6:], uint16(total))
	return c.tag(dst, dst[start:]), nil
}

// shares returns the value of TLV 20 (0 = omitted): bit 1 only with a plan.
func (s Status) shares() uint32 {
	var v uint32
	if s.AccessShares {
		v |= SharesAccess
	}
	if s.PlanAccessShares && s.PlanSegments != 0 {
		v |= SharesPlanAccess
	}
	return v
}

func appendU32(dst []byte, typ byte, v uint32) []byte {
	return binary.BigEndian.AppendUint32(append(dst, typ, 4), v)
}

func appendU64(dst []byte, typ byte, v uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, typ, 8), v)
}

// Decode checks and parses one datagram. It never panics; on rejection the
// error is a *DecodeError whose Reason says why (see ReasonOf). It checks
// only what one message can show: replay, the time window, rate limits and
// self-delivery are the Table's job.
func (c *Codec) Decode(msg []byte) (Status, error) {
	var s Status
	switch {
	case len(msg) > MaxMessageSize:
		return s, reject(Oversized, "%d bytes > %d", len(msg), MaxMessageSize)
	case len(msg) < 5:
		return s, reject(Truncated, "%d bytes < %d", len(msg), MinMessageSize)
	case !bytes.Equal(msg[:4], Magic[:]):
		return s, reject(BadMagic, "") // no detail: random datagrams are the common case
	case msg[4] != Version:
		return s, reject(BadVersion, "version %d, want %d", msg[4], Version)
	case len(msg) < MinMessageSize:
		return s, reject(Truncated, "%d bytes < %d", len(msg), MinMessageSize)
	}
	length := int(binary.BigEndian.Uint16(msg[6:]))
	switch {
	case length > len(msg):
		return s, reject(Truncated, "length field %d > datagram %d", length, len(msg))
	case length < len(msg):
		return s, reject(Malformed, "length field %d < datagram %d", length, len(msg))
	}
	if !bytes.Equal(msg[8:16], c.group[:]) {
		return s, reject(WrongGroup, "group %x, want %x", msg[8:16], c.group[:])
	}
	body, tag := msg[:len(msg)-TagSize], msg[len(msg)-TagSize:]
	var buf [TagSize]byte
	if !hmac.Equal(c.tag(buf[:0], body), tag) {
		return s, reject(BadMAC, "")
	}
	s.Leaving = msg[5]&FlagLeaving != 0
	s.Sender = binary.BigEndian.Uint64(msg[16:])
	s.Seq = binary.BigEndian.Uint64(msg[24:])
	ns := int64(binary.BigEndian.Uint64(msg[32:]))
	if ns <= 0 {
		return s, reject(OutOfRange, "send time %d ns", ns)
	}
	s.SentAt = time.Unix(0, ns)
	if err := parseTLVs(&s, body[HeaderSize:]); err != nil {
		return Status{}, err
	}
	// The one clamp: the minimum RTT cannot exceed the smoothed RTT.
	if s.SRTT > 0 && s.MinRTT > s.SRTT {
		s.MinRTT = s.SRTT
	}
	if err := s.Validate(); err != nil {
		return Status{}, reject(OutOfRange, "%v", err)
	}
	return s, nil
}

func parseTLVs(s *Status, b []byte) error {
	var seen [256]bool // per known type, to reject duplicates (every type a byte can name)
	for len(b) > 0 {
		if len(b) < 2 {
			return reject(Malformed, "TLV header cut at %d bytes", len(b))
		}
		typ, n := b[0], int(b[1])
		if len(b) < 2+n {
			return reject(Malformed, "TLV type %d length %d overruns the message", typ, n)
		}
		v := b[2 : 2+n]
		b = b[2+n:]
		want := knownLen(typ)
		if want == -1 {
			continue // unknown type: skip (forward compatibility)
		}
		if want >= 0 && n != want {
			return reject(Malformed, "TLV type %d has length %d, want %d", typ, n, want)
		}
		if seen[typ] {
			return reject(Malformed, "TLV type %d repeated", typ)
		}
		seen[typ] = true
		switch typ {
		case TLVActiveFlows:
			s.ActiveFlows = binary.BigEndian.Uint32(v)
		case TLVCwnd:
			s.Cwnd = binary.BigEndian.Uint32(v)
		case TLVSRTT:
			s.SRTT = time.Duration(binary.BigEndian.Uint32(v)) * time.Microsecond
		case TLVMinRTT:
			s.MinRTT = time.Duration(binary.BigEndian.Uint32(v)) * time.Microsecond
		case TLVDeliveryRate:
			s.DeliveryRate = binary.BigEndian.Uint64(v)
		case TLVDemand:
			s.Demand = binary.BigEndian.Uint64(v)
		case TLVAppLimited:
			if v[0] > 1 {
				return reject(OutOfRange, "app-limited flag %d not 0 or 1", v[0])
			}
			s.AppLimited = v[0] == 1
		case TLVCapability:
			s.Capability = binary.BigEndian.Uint64(v)
		case TLVBounds:
			s.Lo = binary.BigEndian.Uint32(v)
			s.Hi = binary.BigEndian.Uint32(v[4:])
		case TLVPolicy:
			if err := validPolicy(string(v)); err != nil {
				return reject(OutOfRange, "%v", err)
			}
			s.Policy = string(v)
		case TLVDownFlows:
			s.DownFlows = binary.BigEndian.Uint32(v)
		case TLVDownRate:
			s.DownRate = binary.BigEndian.Uint64(v)
		case TLVDownSRTT:
			s.DownSRTT = time.Duration(binary.BigEndian.Uint32(v)) * time.Microsecond
		case TLVRcvHi:
			s.RcvHi = binary.BigEndian.Uint32(v)
		case TLVQueueSegments:
			s.QueueSegments = binary.BigEndian.Uint32(v)
		case TLVLinkRate:
			s.LinkRate = binary.BigEndian.Uint32(v)
		case TLVAirtime:
			s.AirChannel = binary.BigEndian.Uint32(v)
			s.AirBusy = binary.BigEndian.Uint32(v[4:])
			s.AirOwn = binary.BigEndian.Uint32(v[8:])
		case TLVProbePlan:
			s.PlanEpoch = binary.BigEndian.Uint32(v)
			s.PlanSegments = binary.BigEndian.Uint32(v[4:])
		case TLVProbePlanFrom:
			s.PlanFrom = binary.BigEndian.Uint32(v)
		case TLVShares:
			sh := binary.BigEndian.Uint32(v)
			if sh&^sharesKnown != 0 {
				return reject(OutOfRange, "shares flags %#x: bits other than %#x", sh, sharesKnown)
			}
			s.AccessShares, s.PlanAccessShares = sh&SharesAccess != 0, sh&SharesPlanAccess != 0
		}
	}
	return nil
}

// knownLen returns the value length of a known TLV type, -2 for a known
// variable-length type and -1 for an unknown type.
func knownLen(typ byte) int {
	switch typ {
	case TLVActiveFlows, TLVCwnd, TLVSRTT, TLVMinRTT, TLVDownFlows, TLVDownSRTT, TLVRcvHi, TLVQueueSegments, TLVLinkRate, TLVProbePlanFrom, TLVShares:
		return 4
	case TLVDeliveryRate, TLVDemand, TLVCapability, TLVBounds, TLVDownRate, TLVProbePlan:
		return 8
	case TLVAirtime:
		return 12
	case TLVAppLimited:
		return 1
	case TLVPolicy:
		return -2
	}
	return -1
}

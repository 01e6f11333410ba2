package peer

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"
)

var testKey = Key{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}

func sampleStatus() Status {
	return Status{
		Sender: 0x0123456789abcdef, Seq: 42, SentAt: time.Unix(1_800_000_000, 123_456_789),
		ActiveFlows: 2, Cwnd: 120, SRTT: 35 * time.Millisecond, MinRTT: 12 * time.Millisecond,
		DeliveryRate: 1_250_000, Demand: 64 << 10, AppLimited: true, Capability: 2_375_000,
		Lo: 4, Hi: 60, Policy: "coop",
	}
}

func equalStatus(a, b Status) bool {
	return a.Sender == b.Sender && a.Seq == b.Seq && a.SentAt.Equal(b.SentAt) && a.Leaving == b.Leaving &&
		a.ActiveFlows == b.ActiveFlows && a.Cwnd == b.Cwnd && a.SRTT == b.SRTT && a.MinRTT == b.MinRTT &&
		a.DeliveryRate == b.DeliveryRate && a.Demand == b.Demand && a.AppLimited == b.AppLimited &&
		a.Capability == b.Capability && a.Lo == b.Lo && a.Hi == b.Hi && a.Policy == b.Policy &&
		a.DownFlows == b.DownFlows && a.DownRate == b.DownRate && a.DownSRTT == b.DownSRTT && a.RcvHi == b.RcvHi &&
		a.QueueSegments == b.QueueSegments && a.PlanEpoch == b.PlanEpoch && a.PlanSegments == b.PlanSegments && a.PlanFrom == b.PlanFrom &&
		a.AccessShares == b.AccessShares && a.PlanAccessShares == b.PlanAccessShares && a.LinkRate == b.LinkRate &&
		a.AirChannel == b.AirChannel && a.AirBusy == b.AirBusy && a.AirOwn == b.AirOwn
}

func TestRoundTrip(t *testing.T) {
	c := NewCodec(testKey, GroupID("lab"))
	for _, s := range []Status{sampleStatus(), {Sender: 1, Seq: 1, SentAt: time.Unix(1, 0), Leaving: true}} {
		msg, err := c.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(msg) > MaxMessageSize {
			t.Fatalf("message %d bytes", len(msg))
		}
		got, err := c.Decode(msg)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if !equalStatus(got, s) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, s)
		}
	}
}

// reseal fixes the length field and the tag after a test edited the body.
func reseal(c *Codec, body []byte) []byte {
	total := len(body) + TagSize
	binary.BigEndian.PutUint16(body[6:], uint16(total))
	return c.tag(body, body)
}

func TestDecodeRejects(t *testing.T) {
	c := NewCodec(testKey, GroupID("lab"))
	good, err := c.Encode(sampleStatus())
	if err != nil {
		t.Fatal(err)
	}
	body := func() []byte { return append([]byte(nil), good[:len(good)-TagSize]...) }
	other := NewCodec(Key{9}, GroupID("lab"))
	otherMsg, _ := other.Encode(sampleStatus())
	otherGroup, _ := NewCodec(testKey, GroupID("elsewhere")).Encode(sampleStatus())

	cases := []struct {
		name string
		msg  []byte
		want Reason
	}{
		{"empty", nil, Truncated},
		{"header only", good[:HeaderSize], Truncated},
		{"cut tag", good[:len(good)-1], Truncated},
		{"oversized", make([]byte, MaxMessageSize+1), Oversized},
		{"magic", append([]byte("XoCC"), good[4:]...), BadMagic},
		{"version", func() []byte { b := body(); b[4] = 2; return reseal(c, b) }(), BadVersion},
		{"trailing byte", append(append([]byte(nil), good...), 0), Malformed},
		{"wrong key", otherMsg, BadMAC},
		{"wrong group", otherGroup, WrongGroup},
		{"flipped bit", func() []byte { b := append([]byte(nil), good...); b[HeaderSize+3] ^= 1; return b }(), BadMAC},
		{"srtt too big", func() []byte {
			b := body()
			// TLV SRTT is the third TLV: header + 6 + 6, value at +2.
			binary.BigEndian.PutUint32(b[HeaderSize+12+2:], 61_000_000)
			return reseal(c, b)
		}(), OutOfRange},
		{"cwnd too big", func() []byte {
			b := body()
			binary.BigEndian.PutUint32(b[HeaderSize+6+2:], MaxCwnd+1)
			return reseal(c, b)
		}(), OutOfRange},
		{"rate too big", func() []byte {
			b := body()
			binary.BigEndian.PutUint64(b[HeaderSize+24+2:], MaxRate+1)
			return reseal(c, b)
		}(), OutOfRange},
		{"TLV overruns", func() []byte { b := body(); b[HeaderSize+1] = 200; return reseal(c, b) }(), Malformed},
		{"TLV wrong length", func() []byte { return reseal(c, append(body(), TLVCwnd, 2, 0, 0)) }(), Malformed},
		{"duplicate TLV", func() []byte { return reseal(c, append(body(), TLVCwnd, 4, 0, 0, 0, 1)) }(), Malformed},
		{"cut TLV header", func() []byte { return reseal(c, append(body(), 77)) }(), Malformed},
		{"bad policy byte", func() []byte {
			b := body()
			b = b[:len(b)-6] // drop "coop" TLV
			return reseal(c, append(b, TLVPolicy, 4, 'C', 'o', 'o', 'p'))
		}(), OutOfRange},
		{"sender zero", func() []byte { b := body(); clear(b[16:24]); return reseal(c, b) }(), OutOfRange},
		{"seq zero", func() []byte { b := body(); clear(b[24:32]); return reseal(c, b) }(), OutOfRange},
		{"negative time", func() []byte { b := body(); b[32] = 0x80; return reseal(c, b) }(), OutOfRange},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Decode(tc.msg)
			if got := ReasonOf(err); got != tc.want {
				t.Fatalf("reason %v (%v), want %v", got, err, tc.want)
			}
			var de *DecodeError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tc.want.String()) {
				t.Fatalf("error %q does not carry reason %q", err, tc.want)
			}
		})
	}
}

func TestUnknownTLVSkipped(t *testing.T) {
	c := NewCodec(testKey, GroupID("lab"))
	good, _ := c.Encode(sampleStatus())
	b := append([]byte(nil), good[:len(good)-TagSize]...)
	b = append(b, 200, 3, 'x', 'y', 'z', 0, 0) // unknown type 200 and an empty unknown type 0
	got, err := c.Decode(reseal(c, b))
	if err != nil {
		t.Fatal(err)
	}
	if !equalStatus(got, sampleStatus()) {
		t.Fatalf("got %+v", got)
	}
}

func TestMinRTTClampedToSRTT(t *testing.T) {
	c := NewCodec(testKey, GroupID("lab"))
	s := sampleStatus()
	s.MinRTT = 50 * time.Millisecond
	msg, err := c.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Decode(msg)
	if err != nil {
		t.Fatal(err)
	}
	if got.MinRTT != s.SRTT {
		t.Fatalf("min rtt %v, want clamped to srtt %v", got.MinRTT, s.SRTT)
	}
}

func TestEncodeRejectsInvalidAndClampFixes(t *testing.T) {
	c := NewCodec(testKey, GroupID("lab"))
	s := sampleStatus()
	s.SRTT = 70 * time.Second
	s.Cwnd = 5_000_000
	s.Lo, s.Hi = 80, 60
	s.Policy = "Coop Policy!"
	if _, err := c.Encode(s); err == nil {
		t.Fatal("encode accepted an out-of-range status")
	}
	cl := s.Clamp()
	if cl.SRTT != MaxRTT || cl.Cwnd != MaxCwnd || cl.Lo != 60 || cl.Policy != "coop_policy_" {
		t.Fatalf("clamp: %+v", cl)
	}
	if _, err := c.Encode(cl); err != nil {
		t.Fatal(err)
	}
}

func TestReasonStrings(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Reasons() {
		s := r.String()
		if s == "" || seen[s] || strings.HasPrefix(s, "reason(") {
			t.Fatalf("reason %d has bad or duplicate name %q", r, s)
		}
		seen[s] = true
	}
	if BadMAC.String() != "bad MAC" {
		t.Fatal(BadMAC.String())
	}
}

func TestAirtimeTLV(t *testing.T) {
	c := NewCodec(testKey, GroupID("lab"))
	s := sampleStatus()
	s.AirChannel, s.AirBusy, s.AirOwn = 300_000, 60_000, 75_000 // busy below own is valid
	msg, err := c.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := c.Encode(sampleStatus())
	if len(msg) != len(plain)+14 {
		t.Fatalf("message with TLV 17 is %d bytes, want %d + 14", len(msg), len(plain))
	}
	got, err := c.Decode(msg)
	if err != nil || !equalStatus(got, s) {
		t.Fatalf("round trip: %+v (%v), want %+v", got, err, s)
	}
	// Omitted when the channel time is 0: the message is byte for byte the
	// one without the fields, and decodes to all three 0.
	if got, err := c.Decode(plain); err != nil || got.AirChannel != 0 || got.AirBusy != 0 || got.AirOwn != 0 {
		t.Fatalf("without TLV 17: %+v (%v)", got, err)
	}
	// The limits themselves are valid.
	s.AirChannel, s.AirBusy, s.AirOwn = MaxAirChannel, MaxAirChannel, MaxAirChannel
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name               string
		channel, busy, own uint32
	}{
		{"channel above max", MaxAirChannel + 1, 0, 0},
		{"busy above channel", 300_000, 300_001, 0},
		{"own above channel", 300_000, 0, 300_001},
		{"busy without channel", 0, 1, 0},
		{"own without channel", 0, 0, 1},
	} {
		s := sampleStatus()
		s.AirChannel, s.AirBusy, s.AirOwn = tc.channel, tc.busy, tc.own
		if _, err := c.Encode(s); err == nil {
			t.Errorf("%s: encode accepted it", tc.name)
		}
		cl := s.Clamp()
		if cl.AirChannel > MaxAirChannel || cl.AirBusy > cl.AirChannel || cl.AirOwn > cl.AirChannel {
			t.Errorf("%s: clamp gives %d/%d/%d", tc.name, cl.AirChannel, cl.AirBusy, cl.AirOwn)
		}
		if _, err := c.Encode(cl); err != nil {
			t.Errorf("%s: clamped status: %v", tc.name, err)
		}
		// On the wire (a sender that does not validate): out of range.
		b := append([]byte(nil), plain[:len(plain)-TagSize]...)
		b = append(b, TLVAirtime, 12)
		b = binary.BigEndian.AppendUint32(b, tc.channel)
		b = binary.BigEndian.AppendUint32(b, tc.busy)
		b = binary.BigEndian.AppendUint32(b, tc.own)
		if _, err := c.Decode(reseal(c, b)); ReasonOf(err) != OutOfRange {
			t.Errorf("%s: decode reason %v (%v), want out of range", tc.name, ReasonOf(err), err)
		}
	}
	cl := Status{AirChannel: 70_000_000, AirBusy: 65_000_000, AirOwn: 1_000}.Clamp()
	if cl.AirChannel != MaxAirChannel || cl.AirBusy != MaxAirChannel || cl.AirOwn != 1_000 {
		t.Fatalf("clamp: %d/%d/%d", cl.AirChannel, cl.AirBusy, cl.AirOwn)
	}
	cl = Status{AirChannel: 0, AirBusy: 5, AirOwn: 5}.Clamp()
	if cl.AirBusy != 0 || cl.AirOwn != 0 {
		t.Fatalf("clamp without channel time: %d/%d", cl.AirBusy, cl.AirOwn)
	}

	// Framing: TLV 17 of another length than 12, or twice, is malformed.
	checkFraming(t, c, plain[:len(plain)-TagSize], msg, TLVAirtime, 12, []int{0, 4, 8, 11, 13, 16})
}

// checkFraming checks that a TLV of type typ appended to the message body
// plain with any of the lengths bad, or the last TLV of msg (of type typ,
// size bytes of value) twice, is malformed.
func checkFraming(t *testing.T, c *Codec, plain, msg []byte, typ byte, size int, bad []int) {
	t.Helper()
	for _, n := range bad {
		b := append(append(append([]byte(nil), plain...), typ, byte(n)), make([]byte, n)...)
		if _, err := c.Decode(reseal(c, b)); ReasonOf(err) != Malformed {
			t.Errorf("TLV %d of %d bytes: reason %v (%v), want malformed", typ, n, ReasonOf(err), err)
		}
	}
	b := append([]byte(nil), msg[:len(msg)-TagSize]...)
	b = append(b, b[len(b)-2-size:]...)
	if _, err := c.Decode(reseal(c, b)); ReasonOf(err) != Malformed {
		t.Errorf("TLV %d twice: reason %v (%v), want malformed", typ, ReasonOf(err), err)
	}
}

// planStatus is a status that announces an up-probe (TLV 18) for an epoch,
// its airtime sent too (TLV 17, the type before).
func planStatus() Status {
	s := sampleStatus()
	s.QueueSegments, s.PlanEpoch, s.PlanSegments = 32, 352_000_000, 128
	s.AirChannel, s.AirBusy, s.AirOwn = 300_000, 240_000, 90_000
	return s
}

// roundTrip encodes s, checks that it decodes to itself and returns the
// message.
func roundTrip(t *testing.T, c *Codec, s Status) []byte {
	t.Helper()
	msg := must(t, c, s)
	got, err := c.Decode(msg)
	if err != nil || !equalStatus(got, s) {
		t.Fatalf("round trip: %+v (%v), want %+v", got, err, s)
	}
	return msg
}

func TestProbePlanTLV(t *testing.T) {
	c := NewCodec(testKey, GroupID("lab"))
	s := planStatus()
	msg := roundTrip(t, c, s)
	// Ascending type order: TLV 18 comes last, after TLV 17.
	body := msg[:len(msg)-TagSize]
	if tlv := body[len(body)-10:]; tlv[0] != TLVProbePlan || tlv[1] != 8 ||
		binary.BigEndian.Uint32(tlv[2:]) != 352_000_000 || binary.BigEndian.Uint32(tlv[6:]) != 128 {
		t.Fatalf("last TLV % x, want 12 08 14fb1800 00000080", tlv)
	}
	// Omitted when no probe is announced: the message is the one without it.
	s0 := s
	s0.PlanEpoch, s0.PlanSegments = 0, 0
	msg0 := must(t, c, s0)
	if len(msg0) != len(msg)-10 {
		t.Fatalf("message without TLV 18 is %d bytes, want %d - 10", len(msg0), len(msg))
	}
	if got, err := c.Decode(msg0); err != nil || got.PlanEpoch != 0 || got.PlanSegments != 0 {
		t.Fatalf("without TLV 18: %+v (%v)", got, err)
	}
	// Epoch 0 is an epoch like any other (the index wraps at 2^32).
	s.PlanEpoch = 0
	if got, err := c.Decode(must(t, c, s)); err != nil || got.PlanSegments != 128 || got.PlanEpoch != 0 {
		t.Fatalf("epoch 0: %+v (%v)", got, err)
	}
	// The segments' limit itself is valid; one above it is not, nor an
	// epoch without segments, and Clamp fixes both.
	s.PlanEpoch, s.PlanSegments = 7, MaxQueueSegments
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ epoch, segs uint32 }{{7, MaxQueueSegments + 1}, {7, 0}} {
		s.PlanEpoch, s.PlanSegments = bad.epoch, bad.segs
		if _, err := c.Encode(s); err == nil || !strings.Contains(err.Error(), "probe plan") {
			t.Errorf("encode of plan %d segments in epoch %d: %v", bad.segs, bad.epoch, err)
		}
		if cl := s.Clamp(); cl.Validate() != nil || cl.PlanSegments != min(bad.segs, MaxQueueSegments) {
			t.Errorf("clamp of plan %d/%d: %d/%d", bad.epoch, bad.segs, cl.PlanEpoch, cl.PlanSegments)
		}
	}
	// On the wire (a sender that does not validate): out of range.
	plain := msg0[:len(msg0)-TagSize]
	for _, segs := range []uint32{0, MaxQueueSegments + 1} {
		b := append(append([]byte(nil), plain...), TLVProbePlan, 8)
		b = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(b, 7), segs)
		if _, err := c.Decode(reseal(c, b)); ReasonOf(err) != OutOfRange {
			t.Errorf("plan of %d segments: reason %v (%v), want out of range", segs, ReasonOf(err), err)
		}
	}
	// Framing: another length than 8, or twice, is malformed.
	checkFraming(t, c, plain, msg, TLVProbePlan, 8, []int{0, 4, 7, 9, 12})
}

func TestProbePlanFromTLV(t *testing.T) {
	c := NewCodec(testKey, GroupID("lab"))
	s := planStatus()
	s.PlanFrom = 5 // a chained probe, from the epoch's second half
	msg := roundTrip(t, c, s)
	// Ascending type order: TLV 19 comes last, right after TLV 18.
	body := msg[:len(msg)-TagSize]
	if tlv := body[len(body)-16:]; tlv[0] != TLVProbePlan || tlv[10] != TLVProbePlanFrom || tlv[11] != 4 ||
		binary.BigEndian.Uint32(tlv[12:]) != 5 {
		t.Fatalf("last TLVs % x, want 12 08 14fb1800 00000080 13 04 00000005", tlv)
	}
	// Omitted when 0 (the epoch's start): the message is the plan's
	// without it, 6 bytes shorter.
	s0 := s
	s0.PlanFrom = 0
	msg0 := must(t, c, s0)
	if len(msg0) != len(msg)-6 {
		t.Fatalf("message without TLV 19 is %d bytes, want %d - 6", len(msg0), len(msg))
	}
	if got, err := c.Decode(msg0); err != nil || got.PlanFrom != 0 || got.PlanSegments != 128 {
		t.Fatalf("without TLV 19: %+v (%v)", got, err)
	}
	// Omitted, with TLV 18, when no probe is announced; a PlanFrom without
	// a plan does not validate, and Clamp drops it.
	none := s
	none.PlanEpoch, none.PlanSegments = 0, 0
	if _, err := c.Encode(none); err == nil || !strings.Contains(err.Error(), "probe plan from") {
		t.Errorf("encode of a plan from evaluation 5 without segments: %v", err)
	}
	none = none.Clamp()
	if none.PlanFrom != 0 {
		t.Errorf("clamp of a plan from evaluation 5 without segments: from %d", none.PlanFrom)
	}
	msgNone := must(t, c, none)
	if len(msgNone) != len(msg)-16 {
		t.Fatalf("message without TLVs 18 and 19 is %d bytes, want %d - 16", len(msgNone), len(msg))
	}
	// The limit itself is valid; one above it is not, and Clamp fixes it.
	s.PlanFrom = MaxPlanFrom
	if got, err := c.Decode(must(t, c, s)); err != nil || got.PlanFrom != MaxPlanFrom {
		t.Fatalf("from %d: %+v (%v)", MaxPlanFrom, got, err)
	}
	s.PlanFrom = MaxPlanFrom + 1
	if _, err := c.Encode(s); err == nil || !strings.Contains(err.Error(), "probe plan from") {
		t.Errorf("encode of a plan from evaluation %d: %v", s.PlanFrom, err)
	}
	if cl := s.Clamp(); cl.Validate() != nil || cl.PlanFrom != MaxPlanFrom {
		t.Errorf("clamp of a plan from evaluation %d: %d", s.PlanFrom, cl.PlanFrom)
	}
	// On the wire (a sender that does not validate): above the limit, or
	// without TLV 18, out of range.
	plain := msg0[:len(msg0)-TagSize]
	for _, tc := range []struct {
		name string
		body []byte
		from uint32
	}{
		{"above the limit", plain, MaxPlanFrom + 1},
		{"far above the limit", plain, 1 << 31},
		{"without a plan", msgNone[:len(msgNone)-TagSize], 5},
	} {
		b := binary.BigEndian.AppendUint32(append(append([]byte(nil), tc.body...), TLVProbePlanFrom, 4), tc.from)
		if _, err := c.Decode(reseal(c, b)); ReasonOf(err) != OutOfRange {
			t.Errorf("%s (%d): reason %v (%v), want out of range", tc.name, tc.from, ReasonOf(err), err)
		}
	}
	// Framing: another length than 4, or twice, is malformed.
	checkFraming(t, c, plain, msg, TLVProbePlanFrom, 4, []int{0, 1, 3, 5, 8})
}

func TestSharesTLV(t *testing.T) {
	c := NewCodec(testKey, GroupID("lab"))
	s := planStatus()
	s.PlanFrom, s.AccessShares, s.PlanAccessShares = 5, true, true // the learned split per access, and a split probe's plan
	msg := roundTrip(t, c, s)
	// Ascending type order: TLV 20 comes last, right after TLVs 18 and 19.
	body := msg[:len(msg)-TagSize]
	if tlv := body[len(body)-22:]; tlv[0] != TLVProbePlan || tlv[10] != TLVProbePlanFrom || tlv[16] != TLVShares || tlv[17] != 4 ||
		binary.BigEndian.Uint32(tlv[18:]) != SharesAccess|SharesPlanAccess {
		t.Fatalf("last TLVs % x, want 12 08 14fb1800 00000080 13 04 00000005 14 04 00000003", tlv)
	}
	// Each bit alone, with and without TLV 19.
	for _, tc := range []struct {
		access, plan bool
		from, want   uint32
	}{{true, false, 5, SharesAccess}, {false, true, 5, SharesPlanAccess}, {false, true, 0, SharesPlanAccess}, {true, false, 0, SharesAccess}} {
		s1 := s
		s1.AccessShares, s1.PlanAccessShares, s1.PlanFrom = tc.access, tc.plan, tc.from
		b := roundTrip(t, c, s1)
		b = b[:len(b)-TagSize]
		if tlv := b[len(b)-6:]; tlv[0] != TLVShares || binary.BigEndian.Uint32(tlv[2:]) != tc.want {
			t.Errorf("access %v, plan %v, from %d: last TLV % x, want 14 04 %08x", tc.access, tc.plan, tc.from, tlv, tc.want)
		}
	}
	// Omitted when 0 (equal rates, the plan's too): the message is the
	// plan's without it, 6 bytes shorter.
	s0 := s
	s0.AccessShares, s0.PlanAccessShares = false, false
	msg0 := must(t, c, s0)
	if len(msg0) != len(msg)-6 {
		t.Fatalf("message without TLV 20 is %d bytes, want %d - 6", len(msg0), len(msg))
	}
	if got, err := c.Decode(msg0); err != nil || got.AccessShares || got.PlanAccessShares || got.PlanSegments != 128 {
		t.Fatalf("without TLV 20: %+v (%v)", got, err)
	}
	// Without a plan (TLVs 18 and 19 omitted), the learned split alone is
	// sent; a split probe without a plan does not validate, and Clamp
	// drops it.
	none := s
	none.PlanEpoch, none.PlanSegments, none.PlanFrom = 0, 0, 0
	if _, err := c.Encode(none); err == nil || !strings.Contains(err.Error(), "probe plan shares per access") {
		t.Errorf("encode of a split probe without segments: %v", err)
	}
	if cl := none.Clamp(); cl.PlanAccessShares || !cl.AccessShares || cl.Validate() != nil {
		t.Errorf("clamp of a split probe without segments: access %v, plan %v (%v)", cl.AccessShares, cl.PlanAccessShares, cl.Validate())
	}
	none.PlanAccessShares = false
	msgNone := roundTrip(t, c, none)
	if len(msgNone) != len(msg)-16 {
		t.Fatalf("message without TLVs 18 and 19 is %d bytes, want %d - 16", len(msgNone), len(msg))
	}
	if b := msgNone[:len(msgNone)-TagSize]; b[len(b)-6] != TLVShares || binary.BigEndian.Uint32(b[len(b)-4:]) != SharesAccess {
		t.Fatalf("last TLV % x, want 14 04 00000001", b[len(b)-6:])
	}
	none.AccessShares = false
	msgBare := must(t, c, none)
	if len(msgBare) != len(msgNone)-6 {
		t.Fatalf("message without TLVs 18-20 is %d bytes, want %d - 6", len(msgBare), len(msgNone))
	}
	// On the wire (a sender that does not validate): a bit other than the
	// two, or bit 1 without TLV 18, out of range; 0 (which senders do not
	// send) is equal rates.
	plain := msg0[:len(msg0)-TagSize]
	bare := msgBare[:len(msgBare)-TagSize]
	for _, tc := range []struct {
		name   string
		body   []byte
		shares uint32
	}{
		{"bit 2", plain, 4},
		{"bits 0-2", plain, 7},
		{"bit 31", plain, 1 << 31},
		{"all bits", plain, ^uint32(0)},
		{"a split probe without a plan", bare, SharesPlanAccess},
		{"both without a plan", bare, SharesAccess | SharesPlanAccess},
	} {
		b := binary.BigEndian.AppendUint32(append(append([]byte(nil), tc.body...), TLVShares, 4), tc.shares)
		if _, err := c.Decode(reseal(c, b)); ReasonOf(err) != OutOfRange {
			t.Errorf("%s (%#x): reason %v (%v), want out of range", tc.name, tc.shares, ReasonOf(err), err)
		}
	}
	b := binary.BigEndian.AppendUint32(append(append([]byte(nil), bare...), TLVShares, 4), 0)
	if got, err := c.Decode(reseal(c, b)); err != nil || got.AccessShares || got.PlanAccessShares {
		t.Errorf("TLV 20 of 0: %+v (%v)", got, err)
	}
	// Any order: TLV 20 before TLV 18 is read the same.
	b = binary.BigEndian.AppendUint32(append(append([]byte(nil), bare...), TLVShares, 4), SharesPlanAccess)
	b = append(b, TLVProbePlan, 8)
	b = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(b, 352_000_000), 128)
	if got, err := c.Decode(reseal(c, b)); err != nil || !got.PlanAccessShares || got.PlanSegments != 128 {
		t.Errorf("TLV 20 before TLV 18: %+v (%v)", got, err)
	}
	// Framing: another length than 4, or twice, is malformed.
	checkFraming(t, c, plain, msg, TLVShares, 4, []int{0, 1, 2, 3, 5, 8})
}

// must encodes s, failing the test on an error.
func must(t *testing.T, c *Codec, s Status) []byte {
	t.Helper()
	b, err := c.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

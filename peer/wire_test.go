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
		a.Capability == b.Capability && a.Lo == b.Lo && a.Hi == b.Hi && a.Policy == b.Policy
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

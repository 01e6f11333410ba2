package peer

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// FuzzDecode feeds arbitrary datagrams to Decode, twice: as received (which
// exercises the size, magic, version, length, group and MAC checks) and
// with the length field and tag fixed up (so the fuzzer reaches the TLV
// parser and range checks behind the MAC). Decode must never panic; what it
// accepts must be in range, re-encode to a message that decodes to the same
// status, and pass the table without panicking either.
func FuzzDecode(f *testing.F) {
	c := NewCodec(vectorKey, GroupID(vectorGroup))
	if data, err := os.ReadFile("testdata/vectors.json"); err == nil {
		var vf vectorFile
		if json.Unmarshal(data, &vf) == nil {
			for _, v := range vf.Valid {
				if m, err := hex.DecodeString(v.MessageHex); err == nil {
					f.Add(m)
				}
			}
			for _, v := range vf.Invalid {
				if m, err := hex.DecodeString(v.MessageHex); err == nil {
					f.Add(m)
				}
			}
		}
	}
	f.Add([]byte{})
	f.Add(Magic[:])
	tb := NewTable(c, TableConfig{MaxPeers: 8})
	now := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, msg []byte) {
		check := func(m []byte) {
			s, err := c.Decode(m)
			if err != nil {
				if ReasonOf(err) == OK {
					t.Fatalf("error without reason: %v", err)
				}
				return
			}
			if err := s.Validate(); err != nil {
				t.Fatalf("accepted out-of-range status: %v", err)
			}
			again, err := c.Encode(s)
			if err != nil {
				t.Fatalf("accepted status does not re-encode: %v", err)
			}
			s2, err := c.Decode(again)
			if err != nil || !equalStatus(s, s2) {
				t.Fatalf("re-encoded status differs: %+v vs %+v (%v)", s, s2, err)
			}
			tb.Offer(now, s)
			tb.Live(now)
		}
		check(msg)
		if len(msg) >= MinMessageSize && len(msg) <= MaxMessageSize {
			fixed := append([]byte(nil), msg[:len(msg)-TagSize]...)
			copy(fixed[0:4], Magic[:])
			fixed[4] = Version
			copy(fixed[8:16], c.group[:])
			binary.BigEndian.PutUint16(fixed[6:], uint16(len(msg)))
			check(c.tag(fixed, fixed))
		}
	})
}

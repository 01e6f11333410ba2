package peer

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

var updateVectors = flag.Bool("update", false, "rewrite testdata/vectors.json from the generator")

// The vector file's shapes. 64-bit integers are decimal strings (sender id:
// 16 hex digits) so that readers with float64 JSON numbers stay exact.
type vectorFile struct {
	Comment  string          `json:"comment"`
	KeyHex   string          `json:"key_hex"`
	Group    string          `json:"group_name"`
	GroupHex string          `json:"group_id_hex"`
	Derive   []deriveVector  `json:"derive_key"`
	Groups   []groupVector   `json:"group_ids"`
	Valid    []validVector   `json:"valid"`
	Invalid  []invalidVector `json:"invalid"`
}

type deriveVector struct {
	Passphrase string `json:"passphrase"`
	Group      string `json:"group_name"`
	KeyHex     string `json:"key_hex"`
}

type groupVector struct {
	Name  string `json:"name"`
	IDHex string `json:"id_hex"`
}

type validVector struct {
	Name       string       `json:"name"`
	Note       string       `json:"note,omitempty"`
	Encodes    bool         `json:"encode_matches"` // Encode(fields) reproduces message_hex
	MessageHex string       `json:"message_hex"`
	Fields     vectorFields `json:"fields"`
}

type invalidVector struct {
	Name       string `json:"name"`
	MessageHex string `json:"message_hex"`
	Reason     string `json:"reason"`
}

// vectorFields is the JSON form of a Status (fields.go), shared with
// `coopcc peer decode` / `coopcc peer encode`.
type vectorFields = Fields

func toFields(s Status) vectorFields { return FieldsOf(s) }

func fromFields(t *testing.T, f vectorFields) Status {
	t.Helper()
	s, err := f.Status()
	if err != nil {
		t.Fatalf("vector: %v", err)
	}
	return s
}

var vectorKey = func() Key {
	var k Key
	for i := range k {
		k[i] = byte(i)
	}
	return k
}()

const vectorGroup = "coopcc-vectors"

// generateVectors builds the vector file deterministically.
func generateVectors(t *testing.T) vectorFile {
	c := NewCodec(vectorKey, GroupID(vectorGroup))
	enc := func(s Status) []byte {
		m, err := c.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	body := func(m []byte) []byte { return append([]byte(nil), m[:len(m)-TagSize]...) }
	full := Status{
		Sender: 0x0123456789abcdef, Seq: 1, SentAt: time.Unix(1_800_000_000, 123_456_789),
		ActiveFlows: 2, Cwnd: 120, SRTT: 35_250 * time.Microsecond, MinRTT: 12_000 * time.Microsecond,
		DeliveryRate: 2_375_000, Demand: 65_536, AppLimited: false, Capability: 2_500_000,
		Lo: 4, Hi: 60, Policy: "coop",
	}
	down := full
	down.Seq, down.DownFlows, down.DownRate, down.DownSRTT, down.RcvHi = 3, 1, 1_250_000, 48_500*time.Microsecond, 30
	idle := Status{Sender: 0xfedcba9876543210, Seq: 7, SentAt: time.Unix(1_800_000_000, 0)}
	bye := full
	bye.Seq, bye.Leaving, bye.AppLimited, bye.Policy = 2, true, true, "hayakawa2016"
	unknown := reseal(c, append(body(enc(full)), 0xc8, 3, 'x', 'y', 'z'))
	queue := full
	queue.Seq, queue.QueueSegments = 3, 32
	queueMax := queue
	queueMax.QueueSegments = MaxQueueSegments
	link := queue
	link.Seq, link.LinkRate = 4, 54000
	linkMax := link
	linkMax.LinkRate = MaxLinkRate
	air := link
	air.Seq, air.AirChannel, air.AirBusy, air.AirOwn = 5, 300_000, 240_000, 90_000
	// The probe the group's leader announces (TLV 18): 128 segments per
	// contender (32 learned in TLV 15, an up-probe) in epoch 352 000 000.
	plan := air
	plan.Seq, plan.PlanEpoch, plan.PlanSegments = 7, 352_000_000, 128
	planMax := plan
	planMax.PlanSegments = MaxQueueSegments
	// The same plan taking force 5 evaluations into its epoch (TLV 19): a
	// chained probe, in the epoch's second half.
	planFrom := plan
	planFrom.Seq, planFrom.PlanFrom = 8, 5
	planFromMax := planFrom
	planFromMax.PlanFrom = MaxPlanFrom
	// A split probe (TLV 20 bit 1) in the plan's epoch: its windows share
	// the group's capacity per access at the learned 32 segments per
	// contender, where the group's learned split is equal rates (bit 0
	// clear).
	shares := plan
	shares.Seq, shares.PlanSegments, shares.PlanAccessShares = 9, 32, true
	// A group that shares per access (TLV 20 bit 0), its leader between
	// probes (no TLV 18): right after TLV 17.
	sharesAccess := air
	sharesAccess.Seq, sharesAccess.AccessShares = 10, true
	// Busy below own is valid: some drivers count the frames sent to the
	// station apart from the busy time. Without TLVs 15 and 16.
	airOwn := full
	airOwn.Seq, airOwn.AirChannel, airOwn.AirBusy, airOwn.AirOwn = 6, 300_000, 60_000, 75_000
	// edits TLV 17, the last TLV of air's message: channel at -12, busy at
	// -8, own at -4 from the end of the body.
	airBad := func(channel, busy, own uint32) string {
		b := body(enc(air))
		binary.BigEndian.PutUint32(b[len(b)-12:], channel)
		binary.BigEndian.PutUint32(b[len(b)-8:], busy)
		binary.BigEndian.PutUint32(b[len(b)-4:], own)
		return hex.EncodeToString(reseal(c, b))
	}
	clampIn := full
	clampIn.MinRTT = 50 * time.Millisecond
	clampMsg := enc(clampIn)
	clampOut := full
	clampOut.MinRTT = full.SRTT

	bad := func(edit func([]byte) []byte) string { return hex.EncodeToString(edit(body(enc(full)))) }
	derive := []deriveVector{}
	for _, d := range [][2]string{{"correct horse battery staple", "coopcc-lab"}, {"password", "IEEE"}} {
		k, err := DeriveKey(d[0], d[1])
		if err != nil {
			t.Fatal(err)
		}
		derive = append(derive, deriveVector{Passphrase: d[0], Group: d[1], KeyHex: hex.EncodeToString(k[:])})
	}
	groups := []groupVector{}
	for _, n := range []string{vectorGroup, "coopcc-lab", ""} {
		g := GroupID(n)
		groups = append(groups, groupVector{Name: n, IDHex: hex.EncodeToString(g[:])})
	}
	g := GroupID(vectorGroup)
	otherKey := NewCodec(Key{0xff}, GroupID(vectorGroup))
	otherGroup := NewCodec(vectorKey, GroupID("another-bss"))
	mustHex := func(m []byte, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(m)
	}
	return vectorFile{
		Comment: "coopcc peer protocol v1 test vectors (docs/protocol.md). key_hex authenticates every message; " +
			"group_id_hex = GroupID(group_name). For valid vectors, decoding message_hex must give fields, and when " +
			"encode_matches is true encoding fields must give message_hex byte for byte. Invalid vectors must be " +
			"rejected with reason. Receiver time is not part of decoding (replay/time window are table rules).",
		KeyHex: hex.EncodeToString(vectorKey[:]), Group: vectorGroup, GroupHex: hex.EncodeToString(g[:]),
		Derive: derive, Groups: groups,
		Valid: []validVector{
			{Name: "full status", Encodes: true, MessageHex: hex.EncodeToString(enc(full)), Fields: toFields(full)},
			{Name: "idle terminal, all zero, no policy", Encodes: true, MessageHex: hex.EncodeToString(enc(idle)), Fields: toFields(idle)},
			{Name: "goodbye (flag 0x01), app-limited", Encodes: true, MessageHex: hex.EncodeToString(enc(bye)), Fields: toFields(bye)},
			{Name: "uploads and a download (TLVs 11-14)", Note: "download TLVs after the policy: 0b down flows, 0c down rate, 0d down srtt, 0e receive bound", Encodes: true, MessageHex: hex.EncodeToString(enc(down)), Fields: toFields(down)},
			{Name: "learned queue per contender (TLV 15)", Note: "TLV 0f 04 00000020 after the policy", Encodes: true, MessageHex: hex.EncodeToString(enc(queue)), Fields: toFields(queue)},
			{Name: "link rate (TLV 16)", Note: "TLV 10 04 0000d2f0 (54 000 kbit/s) after TLV 15", Encodes: true, MessageHex: hex.EncodeToString(enc(link)), Fields: toFields(link)},
			{Name: "airtime (TLV 17)", Note: "TLV 11 0c 000493e0 0003a980 00015f90 (channel 300 000 us, busy 240 000 us, own 90 000 us) after TLV 16", Encodes: true, MessageHex: hex.EncodeToString(enc(air)), Fields: toFields(air)},
			{Name: "airtime with busy below own (TLV 17)", Note: "TLV 11 0c 000493e0 0000ea60 000124f8 (channel 300 000 us, busy 60 000 us, own 75 000 us) right after the policy, without TLVs 15 and 16: only busy <= channel and own <= channel are required", Encodes: true, MessageHex: hex.EncodeToString(enc(airOwn)), Fields: toFields(airOwn)},
			{Name: "probe plan (TLV 18)", Note: "TLV 12 08 14fb1800 00000080 (epoch 352 000 000, 128 segments: an up-probe from the learned 32 of TLV 15) after TLV 17", Encodes: true, MessageHex: hex.EncodeToString(enc(plan)), Fields: toFields(plan)},
			{Name: "probe plan from (TLV 19)", Note: "TLV 13 04 00000005 (the plan of TLV 18 takes force 5 evaluations into its epoch: a chained probe, in the epoch's second half) right after TLV 18", Encodes: true, MessageHex: hex.EncodeToString(enc(planFrom)), Fields: toFields(planFrom)},
			{Name: "shares (TLV 20)", Note: "TLV 14 04 00000002 (bit 1: the windows of the plan of TLV 18, 12 08 14fb1800 00000020, share the group's capacity per access in its epoch at the learned 32 segments of TLV 15, a split probe; bit 0 clear: the group's learned split is equal rates) right after TLV 18", Encodes: true, MessageHex: hex.EncodeToString(enc(shares)), Fields: toFields(shares)},
			{Name: "shares per access without a plan (TLV 20)", Note: "TLV 14 04 00000001 (bit 0: the sender's group shares its capacity per access) right after TLV 17, without TLVs 18 and 19", Encodes: true, MessageHex: hex.EncodeToString(enc(sharesAccess)), Fields: toFields(sharesAccess)},
			{Name: "unknown TLV 200 skipped", Note: "TLV c8 03 78797a appended before the tag", MessageHex: hex.EncodeToString(unknown), Fields: toFields(full)},
			{Name: "min RTT above srtt is clamped to srtt", Note: "min_rtt on the wire is 50000 us", MessageHex: hex.EncodeToString(clampMsg), Fields: toFields(clampOut)},
		},
		Invalid: []invalidVector{
			{Name: "wrong key", MessageHex: mustHex(otherKey.Encode(full)), Reason: BadMAC.String()},
			{Name: "wrong group", MessageHex: mustHex(otherGroup.Encode(full)), Reason: WrongGroup.String()},
			{Name: "tag cut by one byte", MessageHex: hex.EncodeToString(enc(full)[:len(enc(full))-1]), Reason: Truncated.String()},
			{Name: "version 2", MessageHex: bad(func(b []byte) []byte { b[4] = 2; return reseal(c, b) }), Reason: BadVersion.String()},
			{Name: "bad magic", MessageHex: bad(func(b []byte) []byte { b[0] = 'X'; return reseal(c, b) }), Reason: BadMagic.String()},
			{Name: "srtt 61 s", MessageHex: bad(func(b []byte) []byte {
				binary.BigEndian.PutUint32(b[HeaderSize+14:], 61_000_000)
				return reseal(c, b)
			}), Reason: OutOfRange.String()},
			{Name: "duplicate cwnd TLV", MessageHex: bad(func(b []byte) []byte {
				return reseal(c, append(b, TLVCwnd, 4, 0, 0, 0, 1))
			}), Reason: Malformed.String()},
			{Name: "lower bound above upper bound", MessageHex: bad(func(b []byte) []byte {
				// Bounds TLV: after 4×6 + 2×10 + 3 bytes = 47, then 10 (capability): value at +59.
				binary.BigEndian.PutUint32(b[HeaderSize+59:], 61)
				return reseal(c, b)
			}), Reason: OutOfRange.String()},
			{Name: "queue per contender 65536", MessageHex: hex.EncodeToString(func() []byte {
				b := body(enc(queueMax))
				binary.BigEndian.PutUint32(b[len(b)-4:], MaxQueueSegments+1) // TLV 15 is the last
				return reseal(c, b)
			}()), Reason: OutOfRange.String()},
			{Name: "link rate 100000001 kbit/s", MessageHex: hex.EncodeToString(func() []byte {
				b := body(enc(linkMax))
				binary.BigEndian.PutUint32(b[len(b)-4:], MaxLinkRate+1) // TLV 16 is the last
				return reseal(c, b)
			}()), Reason: OutOfRange.String()},
			{Name: "air channel 60000001 us", MessageHex: airBad(MaxAirChannel+1, 0, 0), Reason: OutOfRange.String()},
			{Name: "air busy above channel", MessageHex: airBad(300_000, 300_001, 90_000), Reason: OutOfRange.String()},
			{Name: "air own above channel", MessageHex: airBad(300_000, 240_000, 300_001), Reason: OutOfRange.String()},
			{Name: "airtime TLV of 8 bytes", MessageHex: bad(func(b []byte) []byte {
				return reseal(c, append(b, TLVAirtime, 8, 0, 0x04, 0x93, 0xe0, 0, 0x03, 0xa9, 0x80))
			}), Reason: Malformed.String()},
			{Name: "probe plan of 65536 segments", MessageHex: hex.EncodeToString(func() []byte {
				b := body(enc(planMax))
				binary.BigEndian.PutUint32(b[len(b)-4:], MaxQueueSegments+1) // TLV 18 is the last
				return reseal(c, b)
			}()), Reason: OutOfRange.String()},
			{Name: "probe plan from evaluation 256", MessageHex: hex.EncodeToString(func() []byte {
				b := body(enc(planFromMax))
				binary.BigEndian.PutUint32(b[len(b)-4:], MaxPlanFrom+1) // TLV 19 is the last
				return reseal(c, b)
			}()), Reason: OutOfRange.String()},
			{Name: "probe plan from without a probe plan", MessageHex: bad(func(b []byte) []byte {
				return reseal(c, append(b, TLVProbePlanFrom, 4, 0, 0, 0, 5)) // TLV 19 without TLV 18
			}), Reason: OutOfRange.String()},
			{Name: "probe plan from TLV of 2 bytes", MessageHex: hex.EncodeToString(func() []byte {
				b := body(enc(plan))
				return reseal(c, append(b, TLVProbePlanFrom, 2, 0, 5))
			}()), Reason: Malformed.String()},
			{Name: "shares flags 4", MessageHex: hex.EncodeToString(func() []byte {
				b := body(enc(shares))
				binary.BigEndian.PutUint32(b[len(b)-4:], 4) // TLV 20 is the last
				return reseal(c, b)
			}()), Reason: OutOfRange.String()},
			{Name: "shares of a probe plan without a probe plan", MessageHex: bad(func(b []byte) []byte {
				return reseal(c, append(b, TLVShares, 4, 0, 0, 0, 2)) // TLV 20 bit 1 without TLV 18
			}), Reason: OutOfRange.String()},
			{Name: "shares TLV of 2 bytes", MessageHex: hex.EncodeToString(func() []byte {
				b := body(enc(plan))
				return reseal(c, append(b, TLVShares, 2, 0, 2))
			}()), Reason: Malformed.String()},
			{Name: "oversized (513 bytes)", MessageHex: hex.EncodeToString(bytes.Repeat([]byte{0}, MaxMessageSize+1)), Reason: Oversized.String()},
		},
	}
}

func TestVectors(t *testing.T) {
	path := filepath.Join("testdata", "vectors.json")
	if *updateVectors {
		data, err := json.MarshalIndent(generateVectors(t), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate with go test ./peer -run TestVectors -update)", err)
	}
	var vf vectorFile
	if err := json.Unmarshal(data, &vf); err != nil {
		t.Fatal(err)
	}
	keyBytes, _ := hex.DecodeString(vf.KeyHex)
	key, err := ParseKey([]byte(hex.EncodeToString(keyBytes)))
	if err != nil {
		t.Fatal(err)
	}
	g := GroupID(vf.Group)
	if hex.EncodeToString(g[:]) != vf.GroupHex {
		t.Fatalf("group id of %q: %x, vectors say %s", vf.Group, g, vf.GroupHex)
	}
	for _, gv := range vf.Groups {
		if g := GroupID(gv.Name); hex.EncodeToString(g[:]) != gv.IDHex {
			t.Errorf("GroupID(%q) = %x, want %s", gv.Name, g, gv.IDHex)
		}
	}
	for _, d := range vf.Derive {
		k, err := DeriveKey(d.Passphrase, d.Group)
		if err != nil || hex.EncodeToString(k[:]) != d.KeyHex {
			t.Errorf("DeriveKey(%q, %q) = %x, %v; want %s", d.Passphrase, d.Group, k[:], err, d.KeyHex)
		}
	}
	c := NewCodec(key, g)
	for _, v := range vf.Valid {
		msg, _ := hex.DecodeString(v.MessageHex)
		want := fromFields(t, v.Fields)
		got, err := c.Decode(msg)
		if err != nil {
			t.Errorf("%s: decode: %v", v.Name, err)
			continue
		}
		if !equalStatus(got, want) {
			t.Errorf("%s: decoded\n %+v\nwant\n %+v", v.Name, got, want)
		}
		if v.Encodes {
			enc, err := c.Encode(want)
			if err != nil || !bytes.Equal(enc, msg) {
				t.Errorf("%s: encode gives\n %x (%v)\nwant\n %x", v.Name, enc, err, msg)
			}
		}
	}
	for _, v := range vf.Invalid {
		msg, _ := hex.DecodeString(v.MessageHex)
		if _, err := c.Decode(msg); ReasonOf(err).String() != v.Reason {
			t.Errorf("%s: reason %v (%v), want %s", v.Name, ReasonOf(err), err, v.Reason)
		}
	}
	if len(vf.Valid) < 3 || len(vf.Invalid) < 5 {
		t.Fatalf("vector file too small: %d valid, %d invalid", len(vf.Valid), len(vf.Invalid))
	}
}

// TestVectorsPython runs the independent Python check of the committed
// vectors (standard library only), when python3 is installed.
func TestVectorsPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed; the Go check (TestVectors) still runs")
	}
	out, err := exec.Command(py, filepath.Join("testdata", "verify_vectors.py")).CombinedOutput()
	if err != nil {
		t.Fatalf("verify_vectors.py: %v\n%s", err, out)
	}
}

package monitor

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func sampleFlow() Flow {
	return Flow{
		Src: netip.MustParseAddrPort("10.77.1.1:40000"), Dst: netip.MustParseAddrPort("[fd77::2]:5201"),
		State: 1, CC: "cubic", Cwnd: 42, Ssthresh: 30, MSS: 1448, SRTT: 12345 * time.Microsecond,
		BytesAcked: 1 << 40, DeliveryRate: 2_500_000, AppLimited: true, Cookie: 99, Iface: `we"ird`,
	}
}

func TestJSONLAndSnapshotAreValidJSON(t *testing.T) {
	var buf bytes.Buffer
	w := NewJSONLWriter(&buf, "sta\"1")
	if err := w.Write(time.Unix(5, 0), []Flow{sampleFlow(), sampleFlow()}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	var row map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &row); err != nil {
		t.Fatalf("line %q: %v", lines[0], err)
	}
	for k, want := range map[string]any{"t_s": 5.0, "netns": "sta\"1", "dst": "[fd77::2]:5201", "cc": "cubic",
		"cwnd": 42.0, "srtt_us": 12345.0, "bytes_acked": float64(1 << 40), "app_limited": 1.0, "iface": `we"ird`} {
		if row[k] != want {
			t.Errorf("%s = %v, want %v", k, row[k], want)
		}
	}
	if len(row) != len(strings.Split(CSVHeader(), ",")) {
		t.Errorf("%d keys, CSV has %d columns", len(row), len(strings.Split(CSVHeader(), ",")))
	}
	var snap struct {
		Netns string           `json:"netns"`
		Flows []map[string]any `json:"flows"`
	}
	if err := json.Unmarshal(MarshalSnapshot(time.Unix(5, 0), "x", []Flow{sampleFlow()}), &snap); err != nil {
		t.Fatal(err)
	}
	if snap.Netns != "x" || len(snap.Flows) != 1 || snap.Flows[0]["cwnd"] != 42.0 {
		t.Errorf("snapshot %+v", snap)
	}
	if err := json.Unmarshal(MarshalSnapshot(time.Unix(5, 0), "x", nil), &snap); err != nil || len(snap.Flows) != 0 {
		t.Errorf("empty snapshot: %v %+v", err, snap)
	}
}

func TestACKWriter(t *testing.T) {
	ev := ACK{Time: time.Unix(7, 123456789), Src: netip.MustParseAddrPort("10.77.1.1:40000"),
		Dst: netip.MustParseAddrPort("10.77.1.2:5201"), Cookie: 3, Cwnd: 10, Ssthresh: 7,
		SRTT: 2 * time.Millisecond, SndUna: 100, SndNxt: 200, RcvWnd: 65536, SndWnd: 1 << 20, MSS: 1448,
		PacketsOut: 5, BytesAcked: 1000}
	var buf bytes.Buffer
	w := NewACKWriter(&buf, "sta1", false)
	for i := 0; i < 2; i++ {
		if err := w.Write(&ev); err != nil {
			t.Fatal(err)
		}
	}
	want := ACKHeader + "\n" + strings.Repeat("7.123456789,sta1,10.77.1.1:40000,10.77.1.2:5201,3,10,7,2000,100,200,65536,1048576,1448,5,1000\n", 2)
	if buf.String() != want {
		t.Errorf("CSV\n%s\nwant\n%s", buf.String(), want)
	}
	buf.Reset()
	w = NewACKWriter(&buf, "sta1", true)
	if err := w.Write(&ev); err != nil {
		t.Fatal(err)
	}
	var row map[string]any
	if err := json.Unmarshal(buf.Bytes(), &row); err != nil {
		t.Fatalf("%q: %v", buf.String(), err)
	}
	if row["cwnd"] != 10.0 || row["src"] != "10.77.1.1:40000" || row["srtt_us"] != 2000.0 || len(row) != 15 {
		t.Errorf("row %v", row)
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "cubic", `a"b\c`, "tab\there\x00\x1f", "ünï"} {
		var got string
		if err := json.Unmarshal(appendJSONString(nil, s), &got); err != nil || got != s {
			t.Errorf("%q: round trip %q, %v", s, got, err)
		}
	}
}

func TestStates(t *testing.T) {
	for in, want := range map[string]uint8{"established": 1, "ESTAB": 1, "syn-sent": 2, "fin_wait_1": 4,
		"close-wait": 8, "LISTEN": 10, "time-wait": 6} {
		if got, ok := ParseState(in); !ok || got != want {
			t.Errorf("ParseState(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	if _, ok := ParseState("bogus"); ok {
		t.Error("ParseState accepted bogus")
	}
	for s := uint8(1); s <= StateNewSynRecv; s++ {
		inDefault := defaultStates&(1<<s) != 0
		hidden := s == StateListen || s == StateSynRecv || s == StateNewSynRecv || s == StateTimeWait || s == StateClose
		if inDefault == hidden {
			t.Errorf("state %s: in default set %v", StateName(s), inDefault)
		}
		if back, ok := ParseState(StateName(s)); !ok || back != s {
			t.Errorf("StateName(%d) = %q does not parse back", s, StateName(s))
		}
	}
}

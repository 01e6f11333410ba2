package lab

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/coopcc/coopcc/lab/results"
	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/lab/testbed"
	"github.com/coopcc/coopcc/schema"
)

// fullRun is a run record with every field set, so that a field that does
// not survive the trip writer -> reader fails the round trip.
func fullRun() schema.Run {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	st := func(name, group string, managed bool, startS, stopS, phy float64) schema.Station {
		return schema.Station{Name: name, Addr: "10.77.0.2", Group: group, Managed: managed, Agent: managed, CC: "cubic",
			CCVia: "agent", StartS: startS, StopS: stopS, PHYMbps: phy, FER: 0.01, Mobility: "walk", ExtraDelayMS: 4,
			Port: 5201, MaxMbps: 21.5, LaunchedS: startS + 0.1, ExitedS: stopS + 0.2, Direction: "up",
			RateControl: "minstrel", PER: map[string]float64{"54": 0.1}, Sysctl: map[string]string{"net.ipv4.tcp_recovery": "0"},
			PolicyParams: map[string]any{"static_lo": 230.0, "static_hi": 240.0}}
	}
	return schema.Run{Schema: schema.RunVersion, ID: "mode=coop,n=2,delay=256ms,rep=2", Mode: "coop", ModeKind: "policy",
		Policy: "coop", N: 2, DelayMS: 256, Rep: 2, Params: map[string]string{"managed": "1"},
		Stations: []schema.Station{st("sta1", "managed", true, 1, 30, 54), st("sta2", "cubic", false, 5, 25, 24)},
		Server:   "10.77.0.1", Valid: true, InvalidReason: "none", DurationS: 30.5, LengthS: 30,
		Start: start, TrafficStart: start.Add(3 * time.Second), End: start.Add(40 * time.Second),
		Backend: "emu", Direction: "up",
		WLAN:         schema.WLAN{PHY: "802.11g", DataMbps: 54, APQueue: "fifo", APQueueSize: 100, StaQueueSize: 50, FER: 0.01, RetryLimit: 7, AMPDUMax: 1, NeighbourMbps: 10, AirtimeBSSRx: true},
		Wired:        schema.Wired{RateBps: 100e6, DelayMS: 256, QueueSize: 1000, Loss: 0.001},
		PolicyParams: map[string]any{"alpha": 2.5, "table": map[string]any{"x": "y"}}, ServerAgent: true,
		Sysctls:    map[string]map[string]string{"sta1": {"net.ipv4.tcp_congestion_control": "coopcc_cubic"}},
		Emu:        json.RawMessage(`{"valid":true,"reason":""}`),
		SampleHz:   19.8,
		Errors:     []string{"e"},
		Warnings:   []string{"w"},
		GoodputBps: map[string]float64{"sta1": 1e7},
		Faults: []schema.Fault{{Index: 1, Kind: "insider", Set: "liar", Stations: []string{"sta1"}, AtS: 2, UntilS: 20, RestartS: 9,
			Direction: "in", Fraction: 0.5, SkewS: -3,
			Insider: &schema.InsiderStatus{RateBps: 100e9, SRTTMS: 1, MinRTTMS: 0.5, Flows: 65535, Cwnd: 10, IntervalMS: 300},
			Skipped: "x", Events: []schema.FaultEvent{{Action: "drop_stop", Station: "sta1", T: start.Add(5 * time.Second),
				TS: 2, Pid: 42, Seen: 10, Dropped: 5, Error: "e"}}}},
	}
}

// nonZero fails for every field of v (a struct) that is its zero value.
func nonZero(t *testing.T, what string, v any) {
	t.Helper()
	rv := reflect.ValueOf(v)
	for i := 0; i < rv.NumField(); i++ {
		if rv.Field(i).IsZero() {
			t.Errorf("%s.%s is zero in the test record: set it so the round trip covers it", what, rv.Type().Field(i).Name)
		}
	}
}

// run.json is written by the runner (writeJSON of a schema.Run) and read by
// the analysis (results.LoadRun): the run record and its station records
// must come back as they were written, every field of them (issue 14:
// DelayMS/DelayMs, params as map[string]string vs map[string]any, max_mbps
// read but never written).
func TestRunRecordRoundTrip(t *testing.T) {
	rr := fullRun()
	nonZero(t, "schema.Run", rr)
	nonZero(t, "schema.Station", rr.Stations[0])
	nonZero(t, "schema.WLAN", rr.WLAN)
	nonZero(t, "schema.Wired", rr.Wired)
	nonZero(t, "schema.Fault", rr.Faults[0])
	nonZero(t, "schema.InsiderStatus", *rr.Faults[0].Insider)
	nonZero(t, "schema.FaultEvent", rr.Faults[0].Events[0])

	dir := filepath.Join(t.TempDir(), "runs", runDirName(rr.ID))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(filepath.Join(dir, "run.json"), rr); err != nil {
		t.Fatal(err)
	}
	run, _, err := results.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := run.Info
	// emu.json is kept verbatim up to the indentation writeJSON adds.
	var a, b bytes.Buffer
	if err := json.Compact(&a, got.Emu); err != nil {
		t.Fatal(err)
	}
	_ = json.Compact(&b, rr.Emu)
	if a.String() != b.String() {
		t.Errorf("emu: %s, want %s", a.String(), b.String())
	}
	got.Emu, rr.Emu = nil, nil
	for i := range rr.Stations {
		if !reflect.DeepEqual(got.Stations[i], rr.Stations[i]) {
			t.Errorf("station %d:\n got %+v\nwant %+v", i, got.Stations[i], rr.Stations[i])
		}
	}
	if !reflect.DeepEqual(got, rr) {
		t.Errorf("run record changed on the way:\n got %+v\nwant %+v", got, rr)
	}
}

// The station record the runner builds from a scenario carries what the
// scenario says of each terminal, max_mbps of its group included.
func TestStationRecordFromScenario(t *testing.T) {
	s, err := scenario.Parse([]byte(`
name = "rec"
modes = ["policy:coop"]
[[terminals.group]]
name = "phone"
count = 1
phy_mbps = 24
fer = 0.02
max_mbps = 17.5
start = "1s"
[[terminals.group]]
name = "old"
count = 1
managed = false
mobility = "walk"
[traffic]
duration = "10s"
`))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Expand(scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := runRecord(runs[0], RunnerConfig{Backend: testbed.BackendEmu})
	if rec.Schema != schema.RunVersion || rec.ID != runs[0].ID || rec.WLAN.PHY != "802.11g" || rec.WLAN.APQueue != "fifo" {
		t.Errorf("run record: %+v", rec)
	}
	if len(rec.Stations) != 2 {
		t.Fatalf("stations: %+v", rec.Stations)
	}
	p, o := rec.Stations[0], rec.Stations[1]
	if p.Name != "sta1" || p.Group != "phone" || !p.Managed || !p.Agent || p.CCVia != "agent" || p.PHYMbps != 24 ||
		p.FER != 0.02 || p.MaxMbps != 17.5 || p.StartS != 1 || p.StopS != 10 || p.Port != scenario.DefaultPort {
		t.Errorf("managed station: %+v", p)
	}
	if o.Group != "old" || o.Managed || o.CCVia != "iperf3 -C" || o.CC != "cubic" || o.Mobility != "walk" || o.MaxMbps != 0 || o.Port != scenario.DefaultPort+1 {
		t.Errorf("unmanaged station: %+v", o)
	}
}

// A record of a later schema version is refused with a message saying so;
// one without a version (written before it existed) is read.
func TestRunRecordVersion(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mode=cubic,n=1,delay=0ms,rep=1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"mode":"cubic","n":1,"delay_ms":0,"rep":1,"params":{},"valid":true,"stations":[{"name":"sta1","phy_mbps":54}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run, _, err := results.LoadRun(dir)
	if err != nil || run.Info.Mode != "cubic" || run.Info.Stations[0].PHYMbps != 54 {
		t.Fatalf("unversioned record: %+v, %v", run.Info, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"schema":99,"mode":"cubic"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := results.LoadRun(dir); err == nil || !bytes.Contains([]byte(err.Error()), []byte("schema 99 is newer")) {
		t.Errorf("newer record: %v", err)
	}
}

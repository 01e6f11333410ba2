package lab

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coopcc/coopcc/lab/results"
)

// run.json is written by the runner (RunResult) and read by the analysis
// (analysis.RunInfo through results.LoadRun): every field the analysis
// uses must survive the trip (issue: DelayMS/DelayMs, params as
// map[string]string vs map[string]any, max_mbps read but never written).
func TestRunRecordRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs", "mode=coop,n=2,delay=256ms,rep=2")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	rr := RunResult{ID: "mode=coop,n=2,delay=256ms,rep=2", Mode: "coop", ModeKind: "policy", Policy: "coop", N: 2,
		DelayMS: 256, Rep: 2, Params: map[string]string{"managed": "1"}, Valid: true, DurationS: 30, LengthS: 30,
		Start: start, TrafficStart: start.Add(3 * time.Second), Direction: "up",
		WLAN:  WLAN{PHY: "802.11g", DataMbps: 54, AMPDUMax: 0},
		Wired: WiredResult{RateBps: 100e6, DelayMS: 256},
		Stations: []StationResult{
			{Name: "sta1", Group: "managed", Managed: true, StartS: 0, StopS: 30, PHYMbps: 54, LaunchedS: 0.1},
			{Name: "sta2", Group: "cubic", StartS: 5, StopS: 25, PHYMbps: 24, Mobility: "walk"},
		}}
	if err := writeJSON(filepath.Join(dir, "run.json"), rr); err != nil {
		t.Fatal(err)
	}
	run, _, err := results.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	in := run.Info
	if in.Mode != "coop" || in.N != 2 || in.DelayMs != 256 || in.Rep != 2 || !in.Valid || in.DurationS != 30 {
		t.Errorf("run fields: %+v", in)
	}
	if in.Params["managed"] != "1" {
		t.Errorf("params %v, want managed=1", in.Params)
	}
	if !in.Start.Equal(rr.Start) || !in.TrafficStart.Equal(rr.TrafficStart) || in.Direction != "up" {
		t.Errorf("times/direction: %v %v %q", in.Start, in.TrafficStart, in.Direction)
	}
	if in.WLAN.PHY != "802.11g" || in.WLAN.DataMbps != 54 || in.Wired.RateBps != 100e6 {
		t.Errorf("medium: %+v %+v", in.WLAN, in.Wired)
	}
	if len(in.Stations) != 2 {
		t.Fatalf("stations %+v", in.Stations)
	}
	s1, s2 := in.Stations[0], in.Stations[1]
	if s1.Name != "sta1" || !s1.Managed || s1.Group != "managed" || s1.StopS != 30 || s1.PhyMbps != 54 || s1.LaunchedS != 0.1 {
		t.Errorf("station 1: %+v", s1)
	}
	if s2.Name != "sta2" || s2.Managed || s2.StartS != 5 || s2.StopS != 25 || s2.PhyMbps != 24 || s2.Mobility != "walk" {
		t.Errorf("station 2: %+v", s2)
	}
}

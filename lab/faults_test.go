package lab

import (
	"testing"
	"time"

	"github.com/coopcc/coopcc/lab/scenario"
)

// TestFaultRecords: run.json's faults carry what the scenario asked in the
// record's units; in a mode without agents they are recorded as skipped and
// nothing fires.
func TestFaultRecords(t *testing.T) {
	s, err := scenario.Parse([]byte(`
name = "fr"
modes = ["cubic", "coop"]
[terminals]
count = 2
[traffic]
duration = "10s"
[[faults]]
kind = "insider"
terminals = [2]
at = "1s"
rate = "100Gbps"
srtt = "0s"
flows = 65535
[[faults]]
kind = "drop"
terminals = [1]
direction = "both"
fraction = 0.5
at = "2s"
until = "4s"
`))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Expand(scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cubic, coop := runs[0], runs[1]
	if cubic.SampleAgents || !coop.SampleAgents {
		t.Errorf("agents sampled: cubic %v, coop %v", cubic.SampleAgents, coop.SampleAgents)
	}
	recs := faultRecords(coop)
	if len(recs) != 2 || recs[0].Skipped != "" || recs[0].Insider == nil || recs[0].Insider.RateBps != 100e9 ||
		recs[0].Insider.Flows != 65535 || recs[0].Insider.IntervalMS != 300 || recs[0].UntilS != 10 || recs[0].Stations[0] != "sta2" {
		t.Errorf("coop records %+v (insider %+v)", recs, recs[0].Insider)
	}
	if recs[1].Direction != "both" || recs[1].Fraction != 0.5 || recs[1].AtS != 2 || recs[1].UntilS != 4 || recs[1].Insider != nil {
		t.Errorf("drop record %+v", recs[1])
	}
	fr := startFaults(cubic, nil, nil, time.Now().Add(-time.Hour), "", "", "")
	got := fr.stop()
	if len(got) != 2 || got[0].Skipped != "mode cubic runs no agents" || len(got[0].Events) != 0 || len(got[1].Events) != 0 {
		t.Errorf("cubic records %+v", got)
	}
	if again := fr.stop(); len(again) != 2 {
		t.Errorf("second stop: %+v", again)
	}
}

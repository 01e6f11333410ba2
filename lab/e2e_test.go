package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/internal/nettest"
	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/lab/testbed"
	"github.com/coopcc/coopcc/schema"
)

// TestTinyEndToEnd runs the embedded tiny scenario (2 terminals, ~10 s,
// cubic and coop through the agent) on the emulator and checks the results
// directory the analysis reads.
func TestTinyEndToEnd(t *testing.T) {
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	if testing.Short() {
		t.Skip("end-to-end lab run (about 40 s)")
	}
	s, err := scenario.Load("tiny")
	if err != nil {
		t.Fatal(err)
	}
	out := runOnEmulator(t, s, 2)
	var meta schema.Meta
	readJSON(t, filepath.Join(out, "meta.json"), &meta)
	if meta.Scenario != "tiny" || meta.Kernel.Release == "" || meta.Tools["iperf3"] == "" || meta.End.Before(meta.Start) || len(meta.Runs) != 2 {
		t.Errorf("meta.json: %+v", meta)
	}
	if _, err := os.Stat(filepath.Join(out, "scenario.toml")); err != nil {
		t.Error(err)
	}
	for _, id := range []string{"mode=cubic,n=2,delay=4ms,rep=1", "mode=coop,n=2,delay=4ms,rep=1"} {
		dir := filepath.Join(out, "runs", id)
		var rr schema.Run
		readJSON(t, filepath.Join(dir, "run.json"), &rr)
		if rr.N != 2 || rr.DelayMS != 4 || len(rr.Stations) != 2 || rr.DurationS < 9 {
			t.Errorf("%s run.json: %+v", id, rr)
		}
		if !rr.Valid {
			t.Logf("%s marked invalid: %s", id, rr.InvalidReason) // allowed (a loaded machine), but logged
		}
		for _, st := range rr.Stations {
			g, err := iperf3Goodput(filepath.Join(dir, "iperf3", st.Name+".json"))
			if err != nil || g <= 0 {
				t.Errorf("%s %s iperf3: %v bps, %v", id, st.Name, g, err)
			}
			if rr.Mode == "coop" {
				if _, err := os.Stat(filepath.Join(dir, "bounds", st.Name+".jsonl")); err != nil {
					t.Errorf("%s: no bound events of %s: %v", id, st.Name, err)
				}
			}
		}
		for _, f := range []string{"emu.json", "stations.csv", "apqueue.csv"} {
			if _, err := os.Stat(filepath.Join(dir, "emu", f)); err != nil {
				t.Errorf("%s: %v", id, err)
			}
		}
		var emuStatus struct {
			Valid *bool `json:"valid"`
		}
		readJSON(t, filepath.Join(dir, "emu", "emu.json"), &emuStatus)
		if emuStatus.Valid == nil {
			t.Errorf("%s: emu.json has no valid field", id)
		}
		checkFlowsCSV(t, filepath.Join(dir, "flows.csv"), rr)
	}
}

// runOnEmulator runs scenario s on the emulator (3 minutes at most) into a
// fresh directory, which it returns, and checks that all want runs ran and
// no namespace of the run is left. Outside CI it skips when a sweep holds
// the machine: running beside it would invalidate both.
func runOnEmulator(t *testing.T, s *scenario.Scenario, want int) string {
	t.Helper()
	bin := nettest.CoopccBinary(t)
	out := filepath.Join(t.TempDir(), s.Name)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sum, err := RunScenario(ctx, s, RunnerConfig{Out: out, Backend: testbed.BackendEmu, Coopcc: bin, Log: testLog{t}})
	if err != nil && strings.Contains(err.Error(), "another lab run is in progress") && !nettest.InCI() {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if sum.Runs != want || sum.Failed != 0 {
		t.Fatalf("runs %d, failed %d; want %d runs", sum.Runs, sum.Failed, want)
	}
	if ns := ownNamespaces(t); len(ns) > 0 {
		t.Errorf("namespaces left: %v", ns)
	}
	return out
}

package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/internal/nettest"
	"github.com/coopcc/coopcc/lab/analysis"
	"github.com/coopcc/coopcc/lab/results"
	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/lab/testbed"
	"github.com/coopcc/coopcc/schema"
)

// TestFaultsEndToEnd runs experiments/faults/faults.toml (two runs of 20 s,
// three terminals, static hi = 4, lease 1 s) on the emulator and checks the
// expected behaviour of each fault from what the lab recorded: flows.csv
// (cwnd), agents.jsonl (N as each agent sees it), bounds/*.jsonl and
// run.json's fault events.
//
//   - crash (sta1's agent SIGKILLed at 6 s, restarted at 12 s): the flow is
//     bounded until the kill and exceeds its bound within the lease after it
//     (fail open), clearly unbounded until the restart; the peers count
//     N = 3 before, N = 2 after the expiry, N = 3 again after the restart;
//     the new agent bounds the surviving flow again.
//   - net (status sta3 receives dropped from 4 to 10 s; sta2's clock 10 s
//     ahead; an insider in sta1's namespace claiming 100 Gbit/s, RTT 0 and
//     65,535 flows): sta3 sees N = 1 during the drop and N = 3 (sta1, the
//     insider, itself) after it, while sta1 keeps N = 3; sta2 never hears or
//     is heard (N = 1 at sta2); the static bound stays 4 everywhere.
//
// In both: every station's last bound event per destination is lo = hi = 0
// (no flow left bounded). The lab run waits (bounded) for the machine's lab
// lock; runs the emulator marks invalid are logged, not failed: these are
// protocol timings of seconds, not the emulator's microseconds.
func TestFaultsEndToEnd(t *testing.T) {
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	if testing.Short() {
		t.Skip("end-to-end lab run with faults (about 60 s)")
	}
	bin := nettest.CoopccBinary(t)
	s, err := scenario.LoadFile("../experiments/faults/faults.toml")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "faults")
	var sum *Summary
	waitUntil := time.Now().Add(15 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		sum, err = RunScenario(ctx, s, RunnerConfig{Out: out, Backend: testbed.BackendEmu, Coopcc: bin, Log: testLog{t},
			AgentSampleInterval: 250 * time.Millisecond})
		cancel()
		if err == nil || !strings.Contains(err.Error(), "another lab run is in progress") {
			break
		}
		if time.Now().After(waitUntil) && !nettest.InCI() {
			t.Skip(err) // a sweep holds the machine
		}
		time.Sleep(5 * time.Second)
	}
	if err != nil {
		t.Fatal(err)
	}
	if sum.Runs != 2 || sum.Failed != 0 {
		t.Fatalf("runs %d, failed %d", sum.Runs, sum.Failed)
	}
	if ns := ownNamespaces(t); len(ns) > 0 {
		t.Errorf("namespaces left: %v", ns)
	}
	// expiry is the peers' (6 missed intervals of 0.3 s + 0.1 s); interval
	// the status interval.
	const hi, lease, expiry, interval = 4, 1.0, 1.9, 0.3
	load := func(id string) (analysis.Run, map[string][]schema.AgentSample) {
		t.Helper()
		dir := filepath.Join(out, "runs", id)
		run, _, err := results.LoadRun(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !run.Info.Valid {
			t.Logf("%s: INVALID (%s); checking the fault behaviour anyway", id, run.Info.InvalidReason)
		}
		// No flow left bounded: the last event per destination is 0/0.
		for st, evs := range run.Bounds {
			last := map[string]schema.BoundEvent{}
			for _, e := range evs {
				last[e.Dst] = e
			}
			for dst, e := range last {
				if e.Lo != 0 || e.Hi != 0 {
					t.Errorf("%s: %s's last bound for %q is lo %d hi %d (%s), want 0/0", id, st, dst, e.Lo, e.Hi, e.Reason)
				}
			}
		}
		return run, agentSamples(t, filepath.Join(dir, "agents.jsonl"))
	}
	event := func(run analysis.Run, kind, action string) float64 {
		t.Helper()
		for _, f := range run.Info.Faults {
			for _, e := range f.Events {
				if f.Kind == kind && e.Action == action {
					if e.Error != "" {
						t.Fatalf("%s %s: %s", kind, action, e.Error)
					}
					return run.RunTime(e.T)
				}
			}
		}
		t.Fatalf("%s: no %s/%s event in %+v", run.Info.ID, kind, action, run.Info.Faults)
		return 0
	}

	// crash.
	run, agents := load("mode=static,n=3,delay=4ms,faults=crash,rep=1")
	kill, restart := event(run, "kill", "kill"), event(run, "kill", "restart")
	data := dataFlow(t, run, "sta1")
	start := data.Samples[0].T
	var lapse, rebound float64 = math.NaN(), math.NaN()
	maxBefore, maxDead := uint32(0), uint32(0)
	for _, sm := range data.Samples {
		switch {
		case sm.T > start+1 && sm.T < kill:
			maxBefore = max(maxBefore, sm.Cwnd)
		case sm.T >= kill && sm.T < restart:
			if sm.Cwnd > hi && math.IsNaN(lapse) {
				lapse = sm.T - kill
			}
			if sm.T > kill+lease+0.5 {
				maxDead = max(maxDead, sm.Cwnd)
			}
		case sm.T >= restart && math.IsNaN(rebound) && sm.Cwnd <= hi:
			rebound = sm.T - restart
		}
	}
	t.Logf("crash: kill at %.2f s, restart at %.2f s (run clock); sta1's cwnd ≤ %d before the kill, above %d %.2f s after it (lease %.0f s), up to %d while dead, ≤ %d again %.2f s after the restart",
		kill, restart, maxBefore, hi, lapse, lease, maxDead, hi, rebound)
	if maxBefore > hi {
		t.Errorf("sta1's flow reached cwnd %d > %d before the kill", maxBefore, hi)
	}
	if !(lapse <= lease+0.3) {
		t.Errorf("sta1's bound lapsed %.2f s after the kill, want within the lease (%.1f s) + 0.3 s", lapse, lease)
	}
	if maxDead < 4*hi {
		t.Errorf("sta1's flow stayed at cwnd ≤ %d with its agent dead: still bounded", maxDead)
	}
	if !(rebound <= 3) {
		t.Errorf("sta1's flow bounded again %.2f s after the restart, want ≤ 3 s (start-up and adoption)", rebound)
	}
	for _, st := range []string{"sta2", "sta3"} {
		var before, dropAt, backAt float64 = math.NaN(), math.NaN(), math.NaN()
		for _, a := range agents[st] {
			tt := run.RunTime(a.T)
			switch {
			case tt < kill && tt > kill-1.5:
				before = float64(a.N)
			case tt >= kill && tt < restart && a.N == 2 && math.IsNaN(dropAt):
				dropAt = tt - kill
			case tt >= restart && a.N == 3 && math.IsNaN(backAt):
				backAt = tt - restart
			}
			if a.Up && tt > 2 && tt < run.Info.LengthS && (a.N < 2 || a.N > 3) {
				t.Errorf("crash: %s saw N = %d at %.2f s", st, a.N, tt)
			}
		}
		t.Logf("crash: %s: N %v before the kill, 2 from %.2f s after it (expiry %.1f s), 3 again %.2f s after the restart", st, before, dropAt, expiry, backAt)
		// The peer counts the expiry from the last status it heard: up to
		// one interval before the kill, or three when the two before that
		// were lost or late (a loaded 2-core machine: 1.23 s after the kill
		// once, in a CI run). Sooner than that is a peer dropped early.
		if before != 3 || !(dropAt >= expiry-3*interval && dropAt <= expiry+1) || !(backAt <= 4) {
			t.Errorf("crash: %s: N %v before, dropped after %.2f s, back after %.2f s", st, before, dropAt, backAt)
		}
	}
	if n := boundedSamples(agents["sta1"], run, restart+3, run.Info.LengthS); n == 0 {
		t.Errorf("crash: the restarted agent reports no bounded flow")
	}

	// net.
	run, agents = load("mode=static,n=3,delay=4ms,faults=net,rep=1")
	from, until := event(run, "drop", "drop_start"), event(run, "drop", "drop_stop")
	for _, f := range run.Info.Faults {
		for _, e := range f.Events {
			if e.Action == "drop_stop" && (e.Dropped == 0 || e.Dropped != e.Seen) {
				t.Errorf("drop: the filter matched %d and dropped %d status datagrams (fraction 1)", e.Seen, e.Dropped)
			}
			if e.Action == "drop_stop" {
				t.Logf("net: drop filter on sta3: %d status datagrams matched, %d dropped", e.Seen, e.Dropped)
			}
		}
	}
	count := func(st string, lo, hi float64) map[int]int {
		m := map[int]int{}
		for _, a := range agents[st] {
			if tt := run.RunTime(a.T); a.Up && tt >= lo && tt <= hi {
				m[a.N]++
			}
		}
		return m
	}
	steady := 2.0 // after the flows started and the first status exchange
	during := count("sta3", from+expiry+0.5, until)
	end := run.Info.LengthS - 1 // before the flows and the insider stop
	after := count("sta3", until+1.5, end)
	sta1 := count("sta1", steady, end)
	sta2 := count("sta2", steady, end)
	t.Logf("net: N samples by value: sta3 during the drop %v, after it %v; sta1 %v; sta2 (skewed) %v", during, after, sta1, sta2)
	if len(during) != 1 || during[1] == 0 {
		t.Errorf("net: sta3 during the drop saw N %v, want only 1", during)
	}
	if len(after) != 1 || after[3] == 0 {
		t.Errorf("net: sta3 after the drop saw N %v, want only 3 (sta1, the insider and itself; sta2 is skewed)", after)
	}
	if len(sta1) != 1 || sta1[3] == 0 {
		t.Errorf("net: sta1 saw N %v, want only 3 (it hears sta3 and the insider throughout, never the skewed sta2)", sta1)
	}
	event(run, "insider", "insider_start")
	event(run, "insider", "insider_stop")
	for st, evs := range run.Bounds {
		for _, e := range evs {
			if e.Hi != 0 && e.Hi != hi {
				t.Errorf("net: %s's static bound moved to %d under the insider", st, e.Hi)
			}
		}
	}
	if len(sta2) != 1 || sta2[1] == 0 {
		t.Errorf("net: the skewed sta2 saw N %v, want only 1", sta2)
	}
}

// dataFlow is the station's iperf3 data connection: its flow that acked the
// most bytes (the other one is iperf3's control connection).
func dataFlow(t *testing.T, run analysis.Run, station string) analysis.Series {
	t.Helper()
	var best analysis.Series
	var most uint64
	for _, f := range run.Flows {
		if f.Key.Station != station || len(f.Samples) == 0 {
			continue
		}
		if b := f.Samples[len(f.Samples)-1].BytesAcked; b >= most {
			best, most = f, b
		}
	}
	if len(best.Samples) == 0 {
		t.Fatalf("%s: no flow of %s in flows.csv", run.Info.ID, station)
	}
	return best
}

// agentSamples reads agents.jsonl by station.
func agentSamples(t *testing.T, path string) map[string][]schema.AgentSample {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]schema.AgentSample{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var a schema.AgentSample
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[a.Station] = append(out[a.Station], a)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// boundedSamples counts the samples between lo and hi (run clock) in which
// the agent was up and reported a bounded flow.
func boundedSamples(samples []schema.AgentSample, run analysis.Run, lo, hi float64) int {
	n := 0
	for _, a := range samples {
		if tt := run.RunTime(a.T); a.Up && a.BoundedFlows > 0 && tt >= lo && tt <= hi {
			n++
		}
	}
	return n
}

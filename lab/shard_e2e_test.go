package lab

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/internal/nettest"
	"github.com/coopcc/coopcc/lab/results"
	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/lab/testbed"
)

// TestShardMergeEndToEnd runs the tiny scenario with --quick as two shards
// into two results directories and merges them: every run id of the
// scenario is in the merge exactly once, and each directory records its
// shard.
func TestShardMergeEndToEnd(t *testing.T) {
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	if testing.Short() {
		t.Skip("end-to-end lab run (two shards of about 20 s)")
	}
	bin := nettest.CoopccBinary(t)
	s, err := scenario.Load("tiny")
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.Expand(scenario.Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	var dirs []string
	for k := 1; k <= 2; k++ {
		out := filepath.Join(base, "tiny-shard"+string(rune('0'+k)))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		sum, err := RunScenario(ctx, s, RunnerConfig{Out: out, Quick: true, Backend: testbed.BackendEmu, Coopcc: bin, Shard: scenario.Shard{K: k, N: 2}, Log: testLog{t}})
		cancel()
		if err != nil && strings.Contains(err.Error(), "another lab run is in progress") && !nettest.InCI() {
			t.Skip(err) // a sweep holds the machine: running beside it would invalidate both
		}
		if err != nil {
			t.Fatal(err)
		}
		if sum.Runs != 1 {
			t.Errorf("shard %d/2 ran %d runs, want 1 of %d", k, sum.Runs, len(all))
		}
		dirs = append(dirs, out)
	}
	res, err := results.Merge(dirs, results.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, r := range all {
		want = append(want, r.ID)
	}
	for _, r := range res.Runs {
		got = append(got, r.Info.ID)
	}
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("merged runs %v, want every run of the scenario once: %v", got, want)
	}
	if res.Meta["shard"] != "1/2, 2/2" {
		t.Errorf("merged shards %v", res.Meta["shard"])
	}
	for _, d := range dirs {
		one, err := results.Load(d)
		if err != nil {
			t.Fatal(err)
		}
		if one.Info == nil || !strings.HasSuffix(one.Info.Shard, "/2") || len(one.Info.ShardOf) != len(all) || one.Info.ScenarioSHA256 == "" || one.Info.CoopccSHA256 == "" {
			t.Errorf("%s meta: %+v", d, one.Info)
		}
	}
}

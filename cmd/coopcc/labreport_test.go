package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coopcc/coopcc/lab/analysis"
)

func TestLabReportCmd(t *testing.T) {
	out := t.TempDir()
	cmd := newLabReportCmd()
	var stdout bytes.Buffer
	cmd.SetOut(&stdout)
	cmd.SetErr(&stdout)
	cmd.SetArgs([]string{"../../lab/results/testdata/results", "--out", out, "--format", "png"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	s := stdout.String()
	for _, w := range []string{"MODE", "cubic", "1 of 5 runs INVALID", "report: " + filepath.Join(out, "report.html")} {
		if !strings.Contains(s, w) {
			t.Errorf("output lacks %q:\n%s", w, s)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "throughput_vs_n.png")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(out, "throughput_vs_n.svg")); err == nil {
		t.Error("--format png wrote SVG too")
	}

	cmd = newLabReportCmd()
	cmd.SetOut(&stdout)
	cmd.SetErr(&stdout)
	cmd.SetArgs([]string{t.TempDir()})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "no runs/ directory") {
		t.Errorf("empty dir: %v", err)
	}
}

// Several directories: --out is required, and the same shard given twice is
// refused (duplicate run ids) with the reason.
func TestLabReportMergeCmd(t *testing.T) {
	fix := "../../lab/results/testdata/results"
	run := func(args ...string) (string, error) {
		cmd := newLabReportCmd()
		var b bytes.Buffer
		cmd.SetOut(&b)
		cmd.SetErr(&b)
		cmd.SetArgs(args)
		err := cmd.Execute()
		return b.String(), err
	}
	if _, err := run(fix, fix); err == nil || !strings.Contains(err.Error(), "--out") {
		t.Errorf("two dirs without --out: %v", err)
	}
	if _, err := run(fix, fix, "--out", t.TempDir(), "--allow-mixed"); err == nil || !strings.Contains(err.Error(), "is in both") {
		t.Errorf("the same directory twice: %v", err)
	}
}

func TestLabRunShardFlag(t *testing.T) {
	for _, c := range []struct {
		shard, want string
	}{{"1/2", "1 runs"}, {"2/2", "1 runs"}, {"3/2", "1 ≤ K ≤ N"}, {"3/3", "at most 2 shards"}} {
		cmd := newLabRunCmd()
		var b bytes.Buffer
		cmd.SetOut(&b)
		cmd.SetErr(&b)
		cmd.SetArgs([]string{"tiny", "--quick", "--dry-run", "--shard", c.shard})
		err := cmd.Execute()
		if got := b.String() + "\n" + fmt.Sprint(err); !strings.Contains(got, c.want) {
			t.Errorf("--shard %s: %s, want %q", c.shard, got, c.want)
		}
	}
}

// --window measures goodput over part of the schedule and says so; a
// malformed window is refused before anything is read.
func TestLabReportWindowCmd(t *testing.T) {
	fix := "../../lab/results/testdata/results"
	run := func(args ...string) (string, error) {
		cmd := newLabReportCmd()
		var b bytes.Buffer
		cmd.SetOut(&b)
		cmd.SetErr(&b)
		cmd.SetArgs(args)
		err := cmd.Execute()
		return b.String(), err
	}
	out := t.TempDir()
	s, err := run(fix, "--out", out, "--format", "svg", "--window", "1s..3s")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, "over 1s..3s of the traffic schedule") {
		t.Errorf("output does not say the window:\n%s", s)
	}
	txt, err := os.ReadFile(filepath.Join(out, "summary.txt"))
	if err != nil || !strings.HasPrefix(string(txt), "goodput, aggregate and fairness over 1s..3s") {
		t.Errorf("summary.txt does not open with the window: %v\n%s", err, txt)
	}
	if _, err := run(fix, "--out", t.TempDir(), "--window", "25s..10s"); err == nil || !strings.Contains(err.Error(), "--window") {
		t.Errorf("reversed window: %v", err)
	}
}

func TestBusyHostLine(t *testing.T) {
	nan := math.NaN()
	runs := []analysis.RunSummary{{Valid: true, CPUSteal: 0.2}, {CPUSteal: 0.14}, {CPUSteal: 0.03}, {CPUSteal: 0.004}, {CPUSteal: nan}}
	if got, want := busyHostLine(runs), "2 of them ran on a busy host: its hypervisor took 3–14 % of the CPU time"; !strings.HasPrefix(got, want) {
		t.Errorf("got %q, want it to begin %q", got, want)
	}
	if got := busyHostLine(runs[3:]); got != "" {
		t.Errorf("no invalid run on a busy host: %q", got)
	}
}

func TestBusyHostLineOneValue(t *testing.T) {
	if got := busyHostLine([]analysis.RunSummary{{CPUSteal: 0.124}, {CPUSteal: 0.121}}); !strings.Contains(got, "took 12 % of") {
		t.Errorf("%q: want one value where the range rounds to one", got)
	}
}

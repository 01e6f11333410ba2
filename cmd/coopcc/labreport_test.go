package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

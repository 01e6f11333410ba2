package lab

import (
	"strings"
	"testing"

	"github.com/coopcc/coopcc/lab/scenario"
)

// minimal is a valid scenario (the one of lab/scenario's tests).
const minimal = `
name = "t"
modes = ["cubic", "policy:coop", "bbr"]
[terminals]
count = 3
[traffic]
duration = "10s"
`

func TestParamFlags(t *testing.T) {
	got := paramFlags("", map[string]any{"static_hi": int64(7), "coop": map[string]any{"target": 1.2}, "a": "x"})
	want := []string{"a=x", "coop.target=1.2", "static_hi=7"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("paramFlags = %v, want %v", got, want)
	}
}

// A policy's nested parameter table ([policy.coop] coop = {...}) is kept for
// the agents, not refused as an unknown key.
func TestParseNestedPolicyParams(t *testing.T) {
	s, err := scenario.Parse([]byte(minimal + "\n[policy.coop]\ncoop = { busy_cap = 2.0 }\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := paramFlags("", s.Policy["coop"]); len(got) != 1 || got[0] != "coop.busy_cap=2" {
		t.Fatalf("agent flags %v, want [coop.busy_cap=2]", got)
	}
}

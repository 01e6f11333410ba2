package lab

import (
	"testing"

	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/lab/testbed"
)

// Rate control per WLAN and per group, the PER table and per-terminal
// sysctls reach the runs and the emulator's config.
func TestRateControlSysctlKeys(t *testing.T) {
	s, err := scenario.Parse([]byte(`
name = "rc"
modes = ["cubic"]
[wlan]
rate_control = "minstrel"
[traffic]
duration = "10s"
[terminals]
sysctl = { "net.ipv4.tcp_recovery" = "0", "net.ipv4.tcp_early_retrans" = "0" }
per = { "54" = 0.2 }
[[terminals.group]]
name = "old"
count = 2
rate_control = "arf"
sysctl = { "net.ipv4.tcp_recovery" = "1" }
[[terminals.group]]
name = "new"
count = 1
`))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Expand(scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := runs[0].Stations
	if st[0].RateControl != "arf" || st[2].RateControl != "minstrel" || runs[0].WLAN.RateControl != "minstrel" {
		t.Fatalf("rate control: %q %q", st[0].RateControl, st[2].RateControl)
	}
	if st[0].Sysctl["net.ipv4.tcp_recovery"] != "1" || st[0].Sysctl["net.ipv4.tcp_early_retrans"] != "0" || st[2].Sysctl["net.ipv4.tcp_recovery"] != "0" {
		t.Fatalf("sysctls: %v / %v", st[0].Sysctl, st[2].Sysctl)
	}
	if s.Terminals.Sysctl["net.ipv4.tcp_recovery"] != "0" {
		t.Fatal("a group's sysctl changed the [terminals] table")
	}
	if st[1].PER["54"] != 0.2 {
		t.Fatalf("per: %v", st[1].PER)
	}
	cfg := emuConfig(runs[0], &testbed.Testbed{Stations: make([]testbed.Node, 3)})
	if cfg.AP.RateControl != "minstrel" || cfg.Stations[0].RateControl != "arf" || cfg.Stations[2].PER["54"] != 0.2 {
		t.Fatalf("emu config: %+v", cfg)
	}
	if err := cfg.Normalize(); err != nil {
		t.Fatalf("emu config invalid: %v", err)
	}
}

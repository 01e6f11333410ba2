package lab

import (
	"strings"
	"testing"
)

// Rate control per WLAN and per group, the PER table and per-terminal
// sysctls reach the runs and the emulator's config.
func TestRateControlSysctlKeys(t *testing.T) {
	s, err := Parse([]byte(`
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
	runs, err := s.Expand(Options{})
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
	cfg := EmuConfig(runs[0], &Testbed{Stations: make([]Node, 3)})
	if cfg.AP.RateControl != "minstrel" || cfg.Stations[0].RateControl != "arf" || cfg.Stations[2].PER["54"] != 0.2 {
		t.Fatalf("emu config: %+v", cfg)
	}
	if err := cfg.Normalize(); err != nil {
		t.Fatalf("emu config invalid: %v", err)
	}
}

func TestWLANProfile(t *testing.T) {
	s, err := Parse([]byte("name = \"p\"\nmodes = [\"cubic\"]\n[wlan]\nprofile = \"testbed2012\"\nsta_queue_size = 50\n[terminals]\ncount = 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.WLAN.RateControl != "arf" || s.WLAN.APQueueSize != 1000 || s.WLAN.StaQueueSize != 50 {
		t.Fatalf("profile: %+v", s.WLAN)
	}
}

func TestRateControlSysctlErrors(t *testing.T) {
	base := "name = \"e\"\nmodes = [\"cubic\"]\n"
	for _, c := range []struct{ toml, want string }{
		{"[wlan]\nrate_control = \"onoe\"\n[terminals]\ncount = 1\n", `wlan.rate_control: unknown rate control "onoe"`},
		{"[wlan]\nprofile = \"1999\"\n[terminals]\ncount = 1\n", `wlan.profile "1999"`},
		{"[terminals]\ncount = 1\nsysctl = { \"kernel.panic\" = \"1\" }\n", `only net.* keys`},
		{"[terminals]\ncount = 1\nsysctl = { \"net.ipv4.tcp_sack\" = \"\" }\n", `must be one non-empty line`},
		{"[terminals]\ncount = 1\nsysctl = { \"net.ipv4/x\" = \"1\" }\n", `invalid character`},
		{"[terminals]\ncount = 1\nper = { \"11\" = 0.1 }\n", `terminals.per key "11": not a 802.11g rate`},
		{"[[terminals.group]]\ncount = 1\nrate_control = \"rraa\"\n", `terminals.group[0].rate_control`},
	} {
		_, err := Parse([]byte(base + c.toml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.toml, err, c.want)
		}
	}
}

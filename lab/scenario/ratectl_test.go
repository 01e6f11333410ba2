package scenario

import (
	"strings"
	"testing"
)

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

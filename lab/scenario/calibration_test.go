package scenario

import (
	"strings"
	"testing"
)

const calibration = `
name = "cal"
modes = ["static"]
[traffic]
duration = "10s"
[[terminals.group]]
name = "fast"
count = 2
cwnd_base = 4
[[terminals.group]]
name = "slow"
count = 1
[sweep]
bound_multiplier = [2, 8]
`

// mustExpand parses and expands src, which must give n runs.
func mustExpand(t *testing.T, src string, n int) []Run {
	t.Helper()
	s, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Expand(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != n {
		t.Fatalf("%d runs, want %d", len(runs), n)
	}
	return runs
}

func TestExpandBoundMultiplier(t *testing.T) {
	runs := mustExpand(t, calibration, 2)
	if runs[1].ID != "mode=static,n=3,delay=0ms,bound_multiplier=8,rep=1" {
		t.Errorf("id %q", runs[1].ID)
	}
	// k = 8: the fast group's base is 4, the slow group's the default 10.
	want := map[string][2]int{"sta1": {28, 32}, "sta2": {28, 32}, "sta3": {7 * DefaultCwndBase, 8 * DefaultCwndBase}}
	for _, st := range runs[1].Stations {
		p := st.PolicyParams
		if p["static_lo"] != want[st.Name][0] || p["static_hi"] != want[st.Name][1] {
			t.Errorf("%s: params %v, want lo/hi %v", st.Name, p, want[st.Name])
		}
	}
}

func TestExpandAlone(t *testing.T) {
	src := strings.Replace(calibration, `modes = ["static"]`, `modes = ["cubic", "coop"]`, 1)
	src = strings.Replace(src, "bound_multiplier = [2, 8]", `alone = ["all", "slow", "fast"]`, 1)
	src += "[policy.coop]\nmin_segments = 2\n[terminals.group.policy.coop]\nmin_segments = 3\n"
	runs := mustExpand(t, src, 6)
	byID := map[string]Run{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	all := byID["mode=coop,n=3,delay=0ms,alone=all,rep=1"]
	if len(all.Stations) != 3 {
		t.Fatalf("alone=all: %d stations, want 3", len(all.Stations))
	}
	// The group's table (the last [[terminals.group]], "slow") overrides
	// the scenario's for its own terminals only.
	if all.Stations[0].PolicyParams["min_segments"] != int64(2) || all.Stations[2].PolicyParams["min_segments"] != int64(3) {
		t.Errorf("params %v / %v, want 2 (scenario) / 3 (group)", all.Stations[0].PolicyParams, all.Stations[2].PolicyParams)
	}
	slow, ok := byID["mode=cubic,n=1,delay=0ms,alone=slow,rep=1"]
	if !ok || len(slow.Stations) != 1 || slow.Stations[0].Group != "slow" || slow.Stations[0].Name != "sta1" {
		t.Fatalf("alone=slow: %+v", slow.Stations)
	}
	if slow.Stations[0].PolicyParams != nil {
		t.Errorf("an unmanaged cubic run gets no agent parameters: %v", slow.Stations[0].PolicyParams)
	}
}

func TestCalibrationErrors(t *testing.T) {
	cases := []struct{ name, from, to, want string }{
		{"multiplier with cubic", `modes = ["static"]`, `modes = ["static", "cubic"]`, `mode "cubic" would repeat`},
		{"multiplier zero", "[2, 8]", "[0, 8]", "bound_multiplier 0: want 1..1024"},
		{"multiplier dup", "[2, 8]", "[8, 8]", "value 8 listed twice"},
		{"bad base", "cwnd_base = 4", "cwnd_base = -1", "cwnd_base -1"},
		{"alone unknown", "bound_multiplier = [2, 8]", `alone = ["medium"]`, `sweep.alone "medium": want "all" or a group name ([fast slow])`},
		{"group policy unknown", "cwnd_base = 4", "cwnd_base = 4\n[terminals.group.policy.magic]\nx = 1\n", "terminals.group[0].policy.magic: unknown policy"},
	}
	for _, c := range cases {
		src := strings.Replace(calibration, c.from, c.to, 1)
		if src == calibration {
			t.Fatalf("%s: replacement did not apply", c.name)
		}
		_, err := Parse([]byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := Parse([]byte(minimal + "[sweep]\nalone = [\"all\"]\n")); err == nil || !strings.Contains(err.Error(), "needs [[terminals.group]]") {
		t.Errorf("alone without groups: %v", err)
	}
}

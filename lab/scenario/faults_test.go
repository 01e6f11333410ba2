package scenario

import (
	"strings"
	"testing"
	"time"
)

const faultBase = `
name = "f"
modes = ["cubic", "static"]
[terminals]
count = 3
[traffic]
duration = "20s"
[quick]
duration = "10s"
`

func TestFaultsParseAndExpand(t *testing.T) {
	s, err := Parse([]byte(faultBase + `
[[faults]]
kind = "kill"
terminals = [1]
at = "6s"
restart = "12s"

[[faults]]
kind = "drop"
terminals = "2..3"
direction = "in"
fraction = 0.25
at = 4

[[faults]]
kind = "clock_skew"
terminals = [2]
skew = "-10s"

[[faults]]
kind = "insider"
terminals = [3]
at = "2s"
until = "18s"
rate = "100Gbps"
flows = 65535
interval = "100ms"
`))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Expand(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[1].ID != "mode=static,n=3,delay=0ms,rep=1" {
		t.Fatalf("runs %+v", runs)
	}
	f := runs[1].Faults
	if len(f) != 4 {
		t.Fatalf("faults %+v", f)
	}
	if f[0].Kind != FaultKill || f[0].Stations[0] != "sta1" || f[0].At.D() != 6*time.Second || f[0].Restart.D() != 12*time.Second {
		t.Errorf("kill %+v", f[0])
	}
	if f[1].Kind != FaultDrop || strings.Join(f[1].Stations, ",") != "sta2,sta3" || f[1].Until.D() != 20*time.Second || f[1].Fraction != 0.25 || f[1].At.D() != 4*time.Second {
		t.Errorf("drop %+v (until defaults to the end of the traffic)", f[1])
	}
	if f[2].Skew.D() != -10*time.Second {
		t.Errorf("skew %+v", f[2])
	}
	if f[3].Rate != 100e9 || f[3].Flows != 65535 || f[3].Interval.D() != 100*time.Millisecond || f[3].Stations[0] != "sta3" {
		t.Errorf("insider %+v", f[3])
	}
	// --quick halves the traffic: every fault time scales, the skew and the
	// insider's interval do not.
	q, err := s.Expand(Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	f = q[1].Faults
	if f[0].At.D() != 3*time.Second || f[0].Restart.D() != 6*time.Second || f[1].Until.D() != 10*time.Second || f[3].Until.D() != 9*time.Second {
		t.Errorf("quick times %+v", f)
	}
	if f[2].Skew.D() != -10*time.Second || f[3].Interval.D() != 100*time.Millisecond {
		t.Errorf("quick scaled the skew or the interval: %+v", f)
	}
}

func TestFaultSetsSweep(t *testing.T) {
	s, err := Parse([]byte(faultBase + `
[sweep]
faults = ["none", "crash", "liar"]

[[faults]]
set = "crash"
kind = "kill"
terminals = [1]
at = "6s"

[[faults]]
set = "liar"
kind = "insider"
terminals = [2]

[[faults]]
kind = "clock_skew"
terminals = [3]
skew = "1s"
`))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Expand(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 6 {
		t.Fatalf("%d runs", len(runs))
	}
	got := map[string]string{}
	for _, r := range runs {
		var kinds []string
		for _, f := range r.Faults {
			kinds = append(kinds, f.Kind)
		}
		got[r.ID] = strings.Join(kinds, "+")
		if r.Params["faults"] == "" {
			t.Errorf("%s: no faults param", r.ID)
		}
	}
	want := map[string]string{
		"mode=static,n=3,delay=0ms,faults=none,rep=1":  "clock_skew",
		"mode=static,n=3,delay=0ms,faults=crash,rep=1": "kill+clock_skew",
		"mode=static,n=3,delay=0ms,faults=liar,rep=1":  "insider+clock_skew",
	}
	for id, k := range want {
		if got[id] != k {
			t.Errorf("%s: faults %q, want %q (all: %v)", id, got[id], k, got)
		}
	}
	only, err := SelectRuns(runs, "mode=static,faults=liar")
	if err != nil || len(only) != 1 {
		t.Fatalf("--only faults=liar: %v %v", only, err)
	}
}

func TestFaultErrors(t *testing.T) {
	cases := []struct{ name, toml, want string }{
		{"kind", "[[faults]]\nkind = \"nuke\"\nterminals = [1]\n", `faults[0].kind "nuke": want one of kill, drop, clock_skew, insider`},
		{"no terminals", "[[faults]]\nkind = \"kill\"\nat = \"1s\"\n", `faults[0] (kill).terminals: list the station numbers`},
		{"terminal range", "[[faults]]\nkind = \"kill\"\nterminals = [4]\n", `station 4 does not exist (the scenario has at most 3 terminals)`},
		{"terminal dup", "[[faults]]\nkind = \"kill\"\nterminals = [1, 1]\n", `station 1 listed twice`},
		{"at late", "[[faults]]\nkind = \"kill\"\nterminals = [1]\nat = \"20s\"\n", `faults[0] (kill).at 20s: must be before the end of the traffic (20s)`},
		{"restart before", "[[faults]]\nkind = \"kill\"\nterminals = [1]\nat = \"5s\"\nrestart = \"5s\"\n", `restart 5s: must be after at (5s)`},
		{"restart late", "[[faults]]\nkind = \"kill\"\nterminals = [1]\nat = \"5s\"\nrestart = \"25s\"\n", `restart 25s: must be before the end`},
		{"kill fraction", "[[faults]]\nkind = \"kill\"\nterminals = [1]\nfraction = 0.5\n", `key fraction does not apply to kind kill`},
		{"kill until", "[[faults]]\nkind = \"kill\"\nterminals = [1]\nuntil = \"9s\"\n", `key until does not apply to kind kill`},
		{"drop fraction", "[[faults]]\nkind = \"drop\"\nterminals = [1]\ndirection = \"in\"\n", `fraction 0: want the share of status datagrams to drop, in (0, 1]`},
		{"drop fraction big", "[[faults]]\nkind = \"drop\"\nterminals = [1]\ndirection = \"in\"\nfraction = 1.5\n", `fraction 1.5`},
		{"drop direction", "[[faults]]\nkind = \"drop\"\nterminals = [1]\nfraction = 1\ndirection = \"sideways\"\n", `direction "sideways": want "in"`},
		{"drop until", "[[faults]]\nkind = \"drop\"\nterminals = [1]\nfraction = 1\ndirection = \"in\"\nat = \"5s\"\nuntil = \"4s\"\n", `until 4s: must be after at (5s)`},
		{"drop rate", "[[faults]]\nkind = \"drop\"\nterminals = [1]\nfraction = 1\ndirection = \"in\"\nrate = \"1Gbps\"\n", `key rate does not apply to kind drop`},
		{"skew zero", "[[faults]]\nkind = \"clock_skew\"\nterminals = [1]\n", `skew 0s: want a non-zero offset`},
		{"skew big", "[[faults]]\nkind = \"clock_skew\"\nterminals = [1]\nskew = \"2h\"\n", `skew 2h0m0s`},
		{"skew bad", "[[faults]]\nkind = \"clock_skew\"\nterminals = [1]\nskew = \"soon\"\n", `offset "soon"`},
		{"skew at", "[[faults]]\nkind = \"clock_skew\"\nterminals = [1]\nskew = \"3s\"\nat = \"1s\"\n", `key at does not apply to kind clock_skew`},
		{"insider two", "[[faults]]\nkind = \"insider\"\nterminals = [1, 2]\n", `the insider sends from one terminal's namespace`},
		{"insider rate", "[[faults]]\nkind = \"insider\"\nterminals = [1]\nrate = \"200Gbps\"\n", `rate 200Gbps: want 0..100Gbps`},
		{"insider flows", "[[faults]]\nkind = \"insider\"\nterminals = [1]\nflows = 70000\n", `flows 70000: want 0..65535`},
		{"insider rtt", "[[faults]]\nkind = \"insider\"\nterminals = [1]\nsrtt = \"61s\"\n", `srtt 1m1s: at most 60s`},
		{"insider interval", "[[faults]]\nkind = \"insider\"\nterminals = [1]\ninterval = \"1ms\"\n", `interval 1ms: want 10ms..1m`},
		{"unknown key", "[[faults]]\nkind = \"kill\"\nterminals = [1]\nwhen = \"1s\"\n", `unknown key "faults.when"`},
		{"set none", "[sweep]\nfaults = [\"none\"]\n[[faults]]\nset = \"none\"\nkind = \"kill\"\nterminals = [1]\n", `set "none"`},
		{"sweep unknown set", "[sweep]\nfaults = [\"none\", \"x\"]\n[[faults]]\nkind = \"kill\"\nterminals = [1]\n", `sweep.faults "x": no [[faults]] entry has set = "x"`},
		{"set not swept", "[sweep]\nfaults = [\"none\"]\n[[faults]]\nset = \"x\"\nkind = \"kill\"\nterminals = [1]\n", `set "x" is not in sweep.faults`},
		{"set without sweep", "[[faults]]\nset = \"x\"\nkind = \"kill\"\nterminals = [1]\n", `entries name sets (x) but sweep.faults does not list them`},
		{"sweep dup", "[sweep]\nfaults = [\"none\", \"none\"]\n", `sweep.faults: value none listed twice`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(faultBase + c.toml))
			if err == nil {
				t.Fatalf("no error, want one containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// TestFaultsPerRunChecks: terminal numbers beyond a swept run's count and
// kills of unmanaged terminals fail at expansion, naming the run.
func TestFaultsPerRunChecks(t *testing.T) {
	s, err := Parse([]byte(strings.Replace(faultBase, "count = 3", "", 1) + `
[sweep]
n = [1, 3]
[[faults]]
kind = "drop"
terminals = [3]
fraction = 1
direction = "out"
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Expand(Options{}); err == nil || !strings.Contains(err.Error(), "faults[0] names station 3, but run mode=cubic,n=1,delay=0ms,rep=1 has 1 terminals") {
		t.Fatalf("expand: %v", err)
	}
	s, err = Parse([]byte(strings.Replace(faultBase, "count = 3", "count = 3\nmanaged = 1", 1) + `
[[faults]]
kind = "kill"
terminals = [2]
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Expand(Options{}); err == nil || !strings.Contains(err.Error(), "names sta2, which runs no agent") {
		t.Fatalf("expand: %v", err)
	}
}

package scenario

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const minimal = `
name = "t"
modes = ["cubic", "policy:coop", "bbr"]
[terminals]
count = 3
[traffic]
duration = "10s"
`

func TestParseDefaults(t *testing.T) {
	s, err := Parse([]byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if s.WLAN.PHY != "802.11g" || s.WLAN.DataMbps != 54 || s.WLAN.APQueue != "fifo" || s.WLAN.APQueueSize != DefaultAPQueueSize {
		t.Errorf("wlan defaults: %+v", s.WLAN)
	}
	if s.Wired.Rate.Mbps() != 100 || s.Traffic.Direction != "up" || s.Traffic.Port != DefaultPort || s.Repetitions != 1 {
		t.Errorf("defaults: wired %+v traffic %+v reps %d", s.Wired, s.Traffic, s.Repetitions)
	}
	if !s.Terminals.Managed.All {
		t.Errorf("managed defaults to all, got %+v", s.Terminals.Managed)
	}
	if string(s.Source()) != minimal {
		t.Error("source not kept")
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ name, toml, want string }{
		{"unknown top key", minimal + "colour = 3\n", `unknown key "traffic.colour"`},
		{"unknown nested key", strings.Replace(minimal, "count = 3", "count = 3\nphy = \"g\"", 1), `unknown key "terminals.phy"`},
		{"bad mode", strings.Replace(minimal, `"bbr"`, `"vegas"`, 1), `mode "vegas": unknown`},
		{"bad policy", strings.Replace(minimal, `"policy:coop"`, `"policy:magic"`, 1), `unknown policy "magic"`},
		{"dup mode", strings.Replace(minimal, `"policy:coop"`, `"cubic"`, 1), `"cubic" listed twice`},
		{"bad name", strings.Replace(minimal, `"t"`, `"Bad Name"`, 1), `name "Bad Name"`},
		{"no modes", strings.Replace(minimal, `modes = ["cubic", "policy:coop", "bbr"]`, ``, 1), `modes: list at least one mode`},
		{"bad duration", strings.Replace(minimal, `"10s"`, `"10 parsecs"`, 1), `duration "10 parsecs"`},
		{"bad phy", minimal + "[wlan]\nphy = \"802.11z\"\n", `wlan.phy "802.11z"`},
		{"bad g rate", minimal + "[wlan]\ndata_mbps = 53\n", `not a 802.11g rate`},
		{"bad ap queue", minimal + "[wlan]\nap_queue = \"lifo\"\n", `wlan.ap_queue "lifo"`},
		{"bad rate", minimal + "[wired]\nrate = \"fast\"\n", `rate "fast"`},
		{"bad loss", minimal + "[wired]\nloss = 1.5\n", `wired.loss 1.5`},
		{"bad direction", strings.Replace(minimal, `duration = "10s"`, "duration = \"10s\"\ndirection = \"sideways\"", 1), `traffic.direction "sideways"`},
		{"zero terminals", strings.Replace(minimal, "count = 3", "count = 0", 1), `terminals.count 0`},
		{"too many managed", strings.Replace(minimal, "count = 3", "count = 3\nmanaged = 5", 1), `terminals.managed 5`},
		{"bad managed", strings.Replace(minimal, "count = 3", "count = 3\nmanaged = \"some\"", 1), `managed "some"`},
		{"stop before start", strings.Replace(minimal, "count = 3", "count = 3\nstart = \"20s\"", 1), `stop (10s) must be after start (20s)`},
		{"bad range", minimal + "[sweep]\nn = \"10..1\"\n", `range "10..1"`},
		{"sweep n too big", minimal + "[sweep]\nn = [1, 500]\n", `500 terminals`},
		{"sweep dup", minimal + "[sweep]\nn = [1, 1]\n", `value 1 listed twice`},
		{"bad mobility", minimal + "[terminals.x]\n", `unknown key`},
		{"bad sweep mobility", minimal + "[sweep]\nmobility = [\"teleport\"]\n", `"teleport": want a preset`},
		{"groups and count", minimal + "[[terminals.group]]\ncount = 1\n", `either count or [[terminals.group]]`},
		{"unknown policy params", minimal + "[policy.nope]\nx = 1\n", `policy.nope: unknown policy`},
		{"toml syntax", "name = \n", `decode scenario`},
		{"bad agent.on", minimal + "[agent]\non = \"router\"\n", `agent.on "router": want "terminals"`},
		{"server agent on uploads", minimal + "[agent]\non = \"server\"\n", `every terminal must download`},
		{"server agent, an uploading group", strings.Replace(strings.Replace(minimal, "count = 3", "", 1), `duration = "10s"`, "duration = \"10s\"\ndirection = \"down\"", 1) +
			"[agent]\non = \"server\"\n[[terminals.group]]\ncount = 1\ndirection = \"up\"\n", `every terminal must download`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.toml))
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

func TestUnits(t *testing.T) {
	for in, want := range map[string]float64{"100Mbps": 100e6, "1Gbps": 1e9, "1gbit": 1e9, "800kbps": 800e3, "54M": 54e6, "12.5Mbit": 12.5e6} {
		r, err := ParseRate(in)
		if err != nil || float64(r) != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, r, err, want)
		}
	}
	if Rate(1e9).String() != "1Gbps" || Rate(100e6).String() != "100Mbps" || Rate(1.5e9).String() != "1500Mbps" {
		t.Errorf("rate strings: %s %s %s", Rate(1e9), Rate(100e6), Rate(1.5e9))
	}
	var d Duration
	if err := d.UnmarshalTOML(int64(60)); err != nil || d.D() != time.Minute {
		t.Errorf("duration from int: %v %v", d, err)
	}
	if err := d.UnmarshalTOML(0.5); err != nil || d.D() != 500*time.Millisecond {
		t.Errorf("duration from float: %v %v", d, err)
	}
	if durationLabel(Duration(256*time.Millisecond)) != "256ms" || durationLabel(Duration(2*time.Second)) != "2s" || durationLabel(0) != "0ms" {
		t.Error("duration labels")
	}
	var l IntList
	if err := l.UnmarshalTOML("2..10..4"); err != nil || len(l) != 3 || l[2] != 10 {
		t.Errorf("range: %v %v", l, err)
	}
}

func TestExpandSweep(t *testing.T) {
	s, err := Parse([]byte(`
name = "sw"
modes = ["cubic", "coop"]
repetitions = 2
[terminals]
count = 1
[traffic]
duration = "30s"
[sweep]
n = "1..3"
delay = ["4ms", "256ms"]
[quick]
duration = "15s"
n = [3]
`))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Expand(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2*3*2*2 {
		t.Fatalf("%d runs, want 24", len(runs))
	}
	if runs[0].ID != "mode=cubic,n=1,delay=4ms,rep=1" || runs[1].ID != "mode=coop,n=1,delay=4ms,rep=1" {
		t.Errorf("first ids: %s, %s", runs[0].ID, runs[1].ID)
	}
	if last := runs[len(runs)-1]; last.ID != "mode=coop,n=3,delay=256ms,rep=2" || last.Index != 23 {
		t.Errorf("last run: %s #%d", last.ID, last.Index)
	}
	ids := map[string]bool{}
	for _, r := range runs {
		if ids[r.ID] {
			t.Errorf("duplicate id %s", r.ID)
		}
		ids[r.ID] = true
		if len(r.Stations) != r.N || r.Wired.Delay != r.Delay {
			t.Errorf("%s: %d stations, wired delay %v", r.ID, len(r.Stations), r.Wired.Delay)
		}
		for _, st := range r.Stations {
			if st.Agent != (r.Mode.Kind == KindPolicy) || st.CC != "cubic" || st.Stop.D() != 30*time.Second || st.PHYMbps != 54 {
				t.Errorf("%s %s: %+v", r.ID, st.Name, st)
			}
		}
	}
	// Stable: a second expansion gives the same ids in the same order.
	again, _ := s.Expand(Options{})
	for i := range runs {
		if runs[i].ID != again[i].ID {
			t.Fatalf("expansion not stable at %d: %s vs %s", i, runs[i].ID, again[i].ID)
		}
	}
	quick, err := s.Expand(Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(quick) != 2*1*2*1 {
		t.Fatalf("quick: %d runs, want 4", len(quick))
	}
	if quick[0].ID != "mode=cubic,n=3,delay=4ms,rep=1" || quick[0].Length.D() != 15*time.Second {
		t.Errorf("quick run: %s length %v", quick[0].ID, quick[0].Length)
	}
	short, err := s.Expand(Options{Duration: Duration(6 * time.Second)})
	if err != nil || len(short) != 24 || short[0].Length.D() != 6*time.Second {
		t.Errorf("duration override: %d runs, %v", len(short), err)
	}
	if _, err := s.Expand(Options{Duration: Duration(time.Millisecond)}); err == nil {
		t.Error("a 1ms duration override was accepted")
	}
}

// TestExpandFirstRep: --first-rep numbers the repetitions from K, so that
// separate invocations give distinct ids (and seeds), and refuses numbers
// outside 1..MaxRep.
func TestExpandFirstRep(t *testing.T) {
	s, err := Parse([]byte("name = \"fr\"\nmodes = [\"cubic\", \"coop\"]\nrepetitions = 3\n[terminals]\ncount = 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Expand(Options{Repetitions: 2, FirstRep: 4})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	want := []string{"mode=cubic,n=2,delay=0ms,rep=4", "mode=coop,n=2,delay=0ms,rep=4", "mode=cubic,n=2,delay=0ms,rep=5", "mode=coop,n=2,delay=0ms,rep=5"}
	if strings.Join(ids, " ") != strings.Join(want, " ") || runs[3].Rep != 5 || runs[3].Index != 3 {
		t.Errorf("ids %v, want %v", ids, want)
	}
	if def, _ := s.Expand(Options{}); len(def) != 6 || def[0].Rep != 1 || def[5].Rep != 3 {
		t.Errorf("default numbering: %d runs, reps %d..%d", len(def), def[0].Rep, def[len(def)-1].Rep)
	}
	for _, bad := range []Options{{FirstRep: -1}, {FirstRep: MaxRep}, {FirstRep: MaxRep - 1, Repetitions: 3}} {
		if _, err := s.Expand(bad); err == nil || !strings.Contains(err.Error(), "first repetition") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if last, err := s.Expand(Options{FirstRep: MaxRep, Repetitions: 1}); err != nil || last[0].Rep != MaxRep {
		t.Errorf("the last repetition number: %v", err)
	}
}

func TestExpandModesAndGroups(t *testing.T) {
	s, err := Parse([]byte(`
name = "g"
modes = ["bbr", "hayakawa2016", "ap-priority"]
[wired]
extra_delay_step = "2ms"
[traffic]
duration = "100s"
[[terminals.group]]
name = "fast"
count = 2
stagger = "10s"
[[terminals.group]]
name = "legacy"
count = 1
managed = false
phy_mbps = 11
start = "20s"
stop = "80s"
cc = "reno"
[quick]
duration = "50s"
`))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Expand(Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 {
		t.Fatalf("%d runs", len(runs))
	}
	byMode := map[string]Run{}
	for _, r := range runs {
		byMode[r.Mode.Name] = r
	}
	bbr, pol, ap := byMode["bbr"], byMode["hayakawa2016"], byMode["ap-priority"]
	if bbr.ID != "mode=bbr,n=3,delay=0ms,rep=1" {
		t.Errorf("id %s", bbr.ID)
	}
	// A kernel mode switches the managed terminals only; the legacy group
	// keeps its reno.
	for i, st := range bbr.Stations {
		want := "bbr"
		if i == 2 {
			want = "reno"
		}
		if st.CC != want || st.Agent {
			t.Errorf("bbr mode station %d: cc %q, want %q (%+v)", i, st.CC, want, st)
		}
	}
	sta2, sta3 := pol.Stations[1], pol.Stations[2]
	if !pol.Stations[0].Agent || !sta2.Agent || sta3.Agent || sta3.CC != "reno" || sta3.Managed {
		t.Errorf("policy mode stations: %+v", pol.Stations)
	}
	// Quick halves every time; stagger and extra delay apply per terminal.
	if sta2.Start.D() != 5*time.Second || sta2.Stop.D() != 50*time.Second || sta3.Start.D() != 10*time.Second || sta3.Stop.D() != 40*time.Second {
		t.Errorf("times: sta2 %v-%v sta3 %v-%v", sta2.Start, sta2.Stop, sta3.Start, sta3.Stop)
	}
	if sta3.ExtraDelay.D() != 4*time.Millisecond || sta3.PHYMbps != 11 || sta3.Group != "legacy" {
		t.Errorf("sta3: %+v", sta3)
	}
	if ap.WLAN.APQueue != "priority" || ap.Mode.Kind != KindAP || pol.WLAN.APQueue != "fifo" {
		t.Errorf("ap mode: %+v / %+v", ap.WLAN, pol.WLAN)
	}
	if pol.Length.D() != 50*time.Second {
		t.Errorf("length %v", pol.Length)
	}
}

func TestExpandCoexistence(t *testing.T) {
	s, err := Load("coexistence")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Expand(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.ID == "mode=bbr,n=4,delay=256ms,managed=2,rep=1" {
			// BBR on the two managed terminals, beside two CUBIC hosts.
			var ccs []string
			for _, st := range r.Stations {
				ccs = append(ccs, st.CC+"/"+st.Group)
			}
			if got := strings.Join(ccs, " "); got != "bbr/managed bbr/managed cubic/unmanaged cubic/unmanaged" {
				t.Errorf("%s: %s", r.ID, got)
			}
		}
	}
	for _, r := range runs {
		if r.ID == "mode=coop,n=4,delay=256ms,managed=2,rep=1" {
			agents := 0
			for _, st := range r.Stations {
				if st.Agent {
					agents++
				}
			}
			if agents != 2 || r.Stations[0].Group != "managed" || r.Stations[3].Group != "unmanaged" {
				t.Errorf("%s: %d agents, %+v", r.ID, agents, r.Stations)
			}
			return
		}
	}
	t.Fatal("run mode=coop,n=4,delay=256ms,managed=2,rep=1 not found")
}

func TestPresets(t *testing.T) {
	ps, err := Presets()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"default": true, "tiny": true, "scalability": true, "coexistence": true, "dynamic": true, "heterogeneous": true, "vehicle": true}
	for _, s := range ps {
		delete(want, s.Name)
		for _, quick := range []bool{false, true} {
			runs, err := s.Expand(Options{Quick: quick})
			if err != nil || len(runs) == 0 {
				t.Errorf("%s quick=%v: %d runs, %v", s.Name, quick, len(runs), err)
			}
		}
	}
	if len(want) != 0 {
		t.Errorf("missing presets: %v", want)
	}
	d, _ := Load("default")
	runs, _ := d.Expand(Options{})
	if len(runs) != 4 || runs[0].N != 10 || runs[0].Delay.D() != 256*time.Millisecond || runs[2].ID != "mode=coop,n=10,delay=256ms,rep=1" {
		t.Errorf("default: %d runs, first %+v", len(runs), runs[0].ID)
	}
	sc, _ := Load("scalability")
	runs, _ = sc.Expand(Options{})
	if len(runs) != 100 {
		t.Errorf("scalability: %d runs, want 100", len(runs))
	}
	if _, err := Load("nope"); err == nil || !strings.Contains(err.Error(), "presets: ") {
		t.Errorf("unknown preset error: %v", err)
	}
}

// TestExpandServerAgent: with agent.on = "server" a policy mode runs no
// agent on the terminals (they stay managed: the server's agent bounds
// what it sends them), and a kernel mode is unchanged.
func TestExpandServerAgent(t *testing.T) {
	s, err := Parse([]byte(strings.Replace(minimal, `duration = "10s"`, "duration = \"10s\"\ndirection = \"down\"", 1) +
		"[agent]\non = \"server\"\n[policy.coop]\nmss = 1400\n"))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Expand(Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Every group downloading by its own direction is enough, whatever
	// traffic.direction says.
	groups := strings.Replace(minimal, "count = 3", "", 1) + "[agent]\non = \"server\"\n[[terminals.group]]\ncount = 2\ndirection = \"down\"\n"
	if _, err := Parse([]byte(groups)); err != nil {
		t.Errorf("agent on the server, every group downloading: %v", err)
	}
	for _, r := range runs {
		wantServer := r.Mode.Kind == KindPolicy
		if r.ServerAgent != wantServer {
			t.Errorf("%s: ServerAgent %v, want %v", r.ID, r.ServerAgent, wantServer)
		}
		for _, st := range r.Stations {
			if st.Agent || !st.Managed || st.PolicyParams != nil {
				t.Errorf("%s: %s agent %v managed %v params %v; want no agent, managed, no params", r.ID, st.Name, st.Agent, st.Managed, st.PolicyParams)
			}
		}
		if wantServer && r.PolicyParams["mss"] != int64(1400) {
			t.Errorf("%s: the server agent's params %v", r.ID, r.PolicyParams)
		}
	}
}

// TestExperimentFiles: every scenario file under experiments/ that the docs
// tell users to run loads and expands.
func TestExperimentFiles(t *testing.T) {
	var files []string
	err := filepath.WalkDir("../../experiments", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".toml") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("found %d scenario files under experiments/", len(files))
	}
	for _, f := range files {
		s, err := LoadFile(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if _, err := s.Expand(Options{}); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

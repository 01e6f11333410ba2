package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/policy"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "coopcc.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaultsNeedIfaceAndKey(t *testing.T) {
	c := Defaults()
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "iface is not set") {
		t.Fatalf("defaults without iface: got %v, want 'iface is not set'", err)
	}
	c.Iface = "wlan0"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "no group key") {
		t.Fatalf("defaults without key: got %v", err)
	}
	c.Group.KeyFile = "/etc/coopcc/key"
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults + iface + key: %v", err)
	}
	if c.Monitor.Interval.Duration != 500*time.Millisecond || c.Group.Interval.Duration != 300*time.Millisecond || c.Datapath.Lease.Duration != 3*time.Second {
		t.Fatalf("intervals: %+v %+v %+v", c.Monitor, c.Group, c.Datapath)
	}
}

func TestLoadFile(t *testing.T) {
	p := writeFile(t, `
iface = "wlan0"
[group]
id = "lab"
key_file = "/etc/coopcc/key"
interval = "200ms"
[policy]
name = "hayakawa2016"
[policy.params]
bwmax = 19e6
[managed]
dst = ["10.0.0.0/8", "2001:db8::1"]
ports = [5201]
[monitor]
interval = "250ms"
[guard]
enabled = true
max_cost = 0.1
`)
	c, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Group.ID != "lab" || c.Group.Interval.Duration != 200*time.Millisecond || c.Policy.Name != "hayakawa2016" ||
		c.Policy.Params["bwmax"] != 19e6 || c.Monitor.Interval.Duration != 250*time.Millisecond || !c.Guard.Enabled || c.Guard.MaxCost != 0.1 {
		t.Fatalf("decoded %+v", c)
	}
	if c.Group.Port != 51300 || c.Datapath.Lease.Duration != 3*time.Second {
		t.Fatalf("defaults not kept: %+v", c)
	}
	ps := c.DstPrefixes()
	if len(ps) != 2 || ps[1].Bits() != 128 {
		t.Fatalf("prefixes %v", ps)
	}
}

func TestLoadFileRejectsUnknownKeys(t *testing.T) {
	p := writeFile(t, "iface = \"wlan0\"\n[monitor]\nintervall = \"1s\"\n")
	_, err := LoadFile(p)
	if err == nil || !strings.Contains(err.Error(), "monitor.intervall") {
		t.Fatalf("got %v, want an error naming monitor.intervall", err)
	}
}

func TestLoadFileBadDuration(t *testing.T) {
	p := writeFile(t, "[datapath]\nlease = \"three seconds\"\n")
	_, err := LoadFile(p)
	if err == nil || !strings.Contains(err.Error(), "not a duration") {
		t.Fatalf("got %v", err)
	}
}

func TestValidateErrors(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"key and passphrase", func(c *Config) { c.Group.Passphrase = "p" }, "both set"},
		{"transport", func(c *Config) { c.Group.Transport = "tcp" }, "group.transport"},
		{"dst", func(c *Config) { c.Managed.Dst = []string{"10.0.0.0/33"} }, "managed.dst"},
		{"port zero", func(c *Config) { c.Managed.Ports = []uint16{0} }, "managed.ports"},
		{"backend", func(c *Config) { c.Datapath.Backend = "tc" }, "datapath.backend"},
		{"interval", func(c *Config) { c.Monitor.Interval.Duration = time.Millisecond }, "monitor.interval"},
		{"lease vs interval", func(c *Config) { c.Datapath.Lease.Duration = 700 * time.Millisecond }, "shorter than two monitor intervals"},
		{"guard cost", func(c *Config) { c.Guard.Enabled, c.Guard.MaxCost = true, 1.5 }, "guard.max_cost"},
		{"metrics addr", func(c *Config) { c.Observe.MetricsAddr = "9477" }, "metrics_addr"},
		{"log format", func(c *Config) { c.Log.Format = "xml" }, "log.format"},
		{"policy", func(c *Config) { c.Policy.Name = "" }, "policy.name"},
		{"policy value", func(c *Config) {
			c.Policy.Params = map[string]any{"coop": map[string]any{"weight_by_access": true, "weight_by_link_rate": true}}
		}, "policy.params: coop weight_by_access and weight_by_link_rate: choose one"},
		{"policy range", func(c *Config) { c.Policy.Params = map[string]any{"coop": map[string]any{"target_ratio": 0.5}} }, "policy.params: coop target ratio 0.5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults()
			c.Iface, c.Group.KeyFile = "wlan0", "k"
			tc.mod(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	c := Defaults()
	c.Iface, c.Group.KeyFile = "wlan0", "k"
	c.Managed.Dst = []string{"10.0.0.0/8"}
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	c2, err := LoadFile(writeFile(t, string(b)))
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if c2.Iface != "wlan0" || c2.Monitor != c.Monitor || c2.Guard != c.Guard || len(c2.Managed.Dst) != 1 {
		t.Fatalf("round trip: %+v", c2)
	}
}

func TestRestartOnly(t *testing.T) {
	a := Defaults()
	b := a
	b.Policy.Name = "static"
	b.Monitor.Interval.Duration = time.Second
	if k := RestartOnly(a, b); len(k) != 0 {
		t.Fatalf("policy and interval are reloadable, got %v", k)
	}
	b.Iface = "eth1"
	b.Datapath.Backend = "sockops"
	if k := RestartOnly(a, b); len(k) != 2 {
		t.Fatalf("want iface and datapath, got %v", k)
	}
}

func TestDecodePolicyParams(t *testing.T) {
	c := Defaults()
	for _, kv := range []string{"static_hi=7", "bwmax=19e6", "hirai_interval=5s", "coop.target_ratio=1.5", "mss = 1400"} {
		if err := c.SetParam(kv); err != nil {
			t.Fatal(err)
		}
	}
	var p policy.Params
	if err := c.DecodePolicyParams(&p); err != nil {
		t.Fatal(err)
	}
	if p.StaticHi != 7 || p.BWmax != 19e6 || p.HiraiInterval != 5*time.Second || p.Coop.TargetRatio != 1.5 || p.MSS != 1400 {
		t.Fatalf("decoded %+v", p)
	}
	if err := c.SetParam("statik_hi=3"); err != nil {
		t.Fatal(err)
	}
	if err := c.DecodePolicyParams(&p); err == nil || !strings.Contains(err.Error(), "statik_hi") {
		t.Fatalf("unknown parameter: %v", err)
	}
	if err := c.SetParam("novalue"); err == nil {
		t.Fatal("--param without = accepted")
	}
}

func TestPolicyParamsFromFile(t *testing.T) {
	c, err := LoadFile(writeFile(t, "[policy]\nname = \"static\"\n[policy.params]\nstatic_hi = 9\n[policy.params.coop]\ntarget_ratio = 2.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	var p policy.Params
	if err := c.DecodePolicyParams(&p); err != nil {
		t.Fatal(err)
	}
	if p.StaticHi != 9 || p.Coop.TargetRatio != 2 {
		t.Fatalf("decoded %+v", p)
	}
}

func TestExampleConfigIsValid(t *testing.T) {
	c, err := LoadFile("../deploy/coopcc.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	d := Defaults()
	d.Iface, d.Group.KeyFile = c.Iface, c.Group.KeyFile
	d.Managed.Dst, d.Managed.Ports = c.Managed.Dst, c.Managed.Ports
	if c.Group != d.Group || c.Datapath != d.Datapath || c.Monitor != d.Monitor || c.Guard != d.Guard || c.Observe != d.Observe || c.Log != d.Log || c.Policy.Name != d.Policy.Name {
		t.Fatalf("the example's values differ from Defaults():\n%+v\n%+v", c, d)
	}
}

// A parameter of another policy is refused with the policy's own list
// (issue: --policy coop --param static_hi=5 was accepted and ignored).
func TestParamOfAnotherPolicyRefused(t *testing.T) {
	c := Defaults()
	c.Iface, c.Group.KeyFile, c.Policy.Name = "wlan0", "key", "coop"
	if err := c.SetParam("static_hi=5"); err != nil {
		t.Fatal(err)
	}
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "policy coop does not use parameter static_hi") || !strings.Contains(err.Error(), "mss, coop") {
		t.Fatalf("static_hi with coop: %v", err)
	}
	c.Policy.Name = "static"
	if err := c.Validate(); err != nil {
		t.Fatalf("static_hi with static: %v", err)
	}
}

package agent

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/coopcc/coopcc/monitor"
	"github.com/coopcc/coopcc/policy"
)

// Duration is a time.Duration that reads and writes as a Go duration string
// ("500ms", "3s") in TOML.
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration (write e.g. \"500ms\" or \"3s\")", string(b))
	}
	d.Duration = v
	return nil
}

// MarshalText formats the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }

// Config is the agent's whole configuration: the TOML file (`--config`) with
// flags on top. Every field's default is in Defaults and in docs/agent.md.
type Config struct {
	// Iface is the managed interface (the WLAN interface): status messages are
	// sent and received on it and, unless Managed says otherwise, only flows
	// leaving through it are bounded. Required.
	Iface string `toml:"iface"`

	Group    GroupConfig    `toml:"group"`
	Policy   PolicyConfig   `toml:"policy"`
	Managed  ManagedConfig  `toml:"managed"`
	Datapath DatapathConfig `toml:"datapath"`
	Monitor  MonitorConfig  `toml:"monitor"`
	Guard    GuardConfig    `toml:"guard"`
	Observe  ObserveConfig  `toml:"observe"`
	Log      LogConfig      `toml:"log"`
}

// GroupConfig is the cooperation group: who we talk to and how.
type GroupConfig struct {
	// ID names the group (the BSS); only peers with the same ID and key count.
	ID string `toml:"id"`
	// KeyFile holds the pre-shared group key (see peer.LoadKeyFile).
	KeyFile string `toml:"key_file"`
	// Passphrase derives the key with the group ID (peer.DeriveKey), e.g. the
	// WLAN's own passphrase. Prefer KeyFile or the COOPCC_PASSPHRASE environment
	// variable over writing it into a world-readable file.
	Passphrase string `toml:"passphrase"`
	// Port is the UDP port of the status exchange.
	Port uint16 `toml:"port"`
	// Transport is "ipv4" (broadcast on Iface) or "ipv6" (link-local multicast).
	Transport string `toml:"transport"`
	// Interval is the status broadcast period (papers: 0.3 s).
	Interval Duration `toml:"interval"`
	// ExpiryIntervals is how many missed intervals drop a peer.
	ExpiryIntervals int `toml:"expiry_intervals"`
	// ClockSkew is a test hook (`--clock-skew`, the lab's clock_skew
	// fault), not a file key: the peer protocol's wall clock runs this far
	// from the host's (peer.NodeConfig.ClockSkew).
	ClockSkew time.Duration `toml:"-"`
}

// PolicyConfig selects the control rule.
type PolicyConfig struct {
	// Name is one of policy.Names(): static, hirai2013, hayakawa2015, hayakawa2016, coop.
	Name string `toml:"name"`
	// Params are the policy's parameters (policy.Params fields), checked when
	// the policy is built.
	Params map[string]any `toml:"params"`
}

// ManagedConfig selects which of this host's TCP flows are bounded. A flow is
// managed when it leaves through Iface (or Iface is "" and the interface
// check is skipped), its destination is in one of Dst (empty = any) and its
// destination port is one of Ports (empty = any).
type ManagedConfig struct {
	// Iface overrides the top-level Iface for the flow filter; "-" = any interface.
	Iface string   `toml:"iface"`
	Dst   []string `toml:"dst"`
	Ports []uint16 `toml:"ports"`
}

// DatapathConfig configures the enforcement (package datapath).
type DatapathConfig struct {
	// Lease is how long bounds hold without a heartbeat (fail-open).
	Lease Duration `toml:"lease"`
	// Backend is "auto", "struct_ops" or "sockops".
	Backend string `toml:"backend"`
	// SwitchExisting also switches connections that existed before start.
	SwitchExisting bool `toml:"switch_existing"`
	// Receive bounds downloads too, through the window this host
	// advertises: "auto" (when the kernel supports it), "on" (refuse to
	// start without it) or "off".
	Receive string `toml:"receive"`
}

// MonitorConfig configures the control loop's period.
type MonitorConfig struct {
	// Interval is the monitor period; the policy is evaluated on every tick.
	Interval Duration `toml:"interval"`
	// AirtimeFile, when set, is where the WLAN interface's airtime
	// counters are read from (package airtime's file form) instead of
	// nl80211: the lab's emulator keeps each station's there.
	AirtimeFile string `toml:"airtime_file"`
}

// GuardConfig configures the guard that switches control off when it does
// not help (papers/004 §future work). See Guard.
type GuardConfig struct {
	Enabled bool `toml:"enabled"`
	// OnWindow is how long control runs between two off-probes.
	OnWindow Duration `toml:"on_window"`
	// OffWindow is the length of a probe with control off.
	OffWindow Duration `toml:"off_window"`
	// Settle is skipped at the start of each window (TCP reacting to the change).
	Settle Duration `toml:"settle"`
	// MaxCost is the largest fractional throughput loss accepted with control
	// on versus off (0.05 = control may cost up to 5 %).
	MaxCost float64 `toml:"max_cost"`
	// Backoff is how long control stays off once the guard disabled it.
	Backoff Duration `toml:"backoff"`
	// Scope is "group" (self + peers' reported delivery rates) or "self".
	Scope string `toml:"scope"`
}

// ObserveConfig configures metrics, status and events.
type ObserveConfig struct {
	// MetricsAddr is the Prometheus listen address ("" = off), e.g. "127.0.0.1:9477".
	MetricsAddr string `toml:"metrics_addr"`
	// StatusSocket is the unix socket `coopcc agent status` talks to;
	// "" = /run/coopcc/agent-<netns inode>.sock.
	StatusSocket string `toml:"status_socket"`
	// Events is the JSON-lines file of bound changes ("" = off).
	Events string `toml:"events"`
	// LockDir holds the single-instance lock (one per network namespace).
	LockDir string `toml:"lock_dir"`
}

// LogConfig configures slog.
type LogConfig struct {
	Format string `toml:"format"` // text or json
	Level  string `toml:"level"`  // debug, info, warn, error
}

// Defaults returns the configuration used for everything neither the file
// nor a flag sets. docs/agent.md lists the same values.
func Defaults() Config {
	return Config{
		Group: GroupConfig{
			ID:              "coopcc",
			Port:            51300,
			Transport:       "ipv4",
			Interval:        Duration{300 * time.Millisecond},
			ExpiryIntervals: 6,
		},
		Policy:   PolicyConfig{Name: "coop"},
		Datapath: DatapathConfig{Lease: Duration{3 * time.Second}, Backend: "auto", SwitchExisting: true, Receive: "auto"},
		Monitor:  MonitorConfig{Interval: Duration{500 * time.Millisecond}},
		Guard: GuardConfig{
			Enabled:   false,
			OnWindow:  Duration{30 * time.Second},
			OffWindow: Duration{5 * time.Second},
			Settle:    Duration{1 * time.Second},
			MaxCost:   0.05,
			Backoff:   Duration{5 * time.Minute},
			Scope:     "group",
		},
		Observe: ObserveConfig{LockDir: "/run/coopcc"},
		Log:     LogConfig{Format: "text", Level: "info"},
	}
}

// LoadFile reads a TOML file over the defaults. Unknown keys are an error
// that names them (a typo must not silently fall back to a default).
func LoadFile(path string) (Config, error) {
	cfg := Defaults()
	b, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("read config: %w", err)
	}
	if err := decodeInto(&cfg, b); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// decodeInto decodes TOML over cfg strictly.
func decodeInto(cfg *Config, b []byte) error {
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(cfg)
	if err != nil {
		return err
	}
	var unknown []string
	for _, k := range md.Undecoded() {
		// Policy parameters are checked against the policy's own type later.
		if len(k) >= 2 && k[0] == "policy" && k[1] == "params" {
			continue
		}
		unknown = append(unknown, k.String())
	}
	if len(unknown) > 0 {
		return fmt.Errorf("unknown key %s (see docs/agent.md for the valid keys)", strings.Join(unknown, ", "))
	}
	return nil
}

// ManagedIface is the interface the flow filter uses ("" = any).
func (c Config) ManagedIface() string {
	switch c.Managed.Iface {
	case "":
		return c.Iface
	case "-":
		return ""
	}
	return c.Managed.Iface
}

// DstPrefixes parses Managed.Dst (validated by Validate).
func (c Config) DstPrefixes() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range c.Managed.Dst {
		if p, err := monitor.ParsePrefix(s); err == nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// Validate checks the configuration and returns every problem, one per line,
// each saying what is wrong and what to write instead.
func (c Config) Validate() error {
	var p problems
	c.checkIface(&p)
	c.Group.check(&p)
	c.Policy.check(&p)
	c.checkPolicyValues(&p)
	c.Managed.check(&p)
	c.Datapath.check(&p)
	c.Monitor.check(&p)
	c.checkLeaseCoversMonitor(&p)
	c.Guard.check(&p)
	c.Observe.check(&p)
	c.Log.check(&p)
	return errors.Join(p...)
}

// problems collects what Validate finds wrong, in the order it checks.
type problems []error

// addf records a problem described by format and its arguments.
func (p *problems) addf(format string, a ...any) { *p = append(*p, fmt.Errorf(format, a...)) }

// add records err as it is.
func (p *problems) add(err error) { *p = append(*p, err) }

// checkInterval records a problem when the duration d of the setting name
// lies outside [lo, hi].
func (p *problems) checkInterval(name string, d, lo, hi time.Duration) {
	if d < lo || d > hi {
		p.addf("%s %v is out of range: use %v..%v", name, d, lo, hi)
	}
}

// checkIface checks the managed interface's name.
func (c Config) checkIface(p *problems) {
	if c.Iface == "" {
		p.addf("iface is not set: give the WLAN interface with --iface IF or iface = \"wlan0\"")
	} else if len(c.Iface) > 15 || strings.ContainsAny(c.Iface, "/ \t") {
		p.addf("iface %q is not a valid interface name", c.Iface)
	}
}

// check checks the group's identity, key, transport and timing.
func (g GroupConfig) check(p *problems) {
	if g.ID == "" {
		p.addf("group.id is empty: set --group ID (all terminals of one AP use the same)")
	}
	if g.KeyFile == "" && g.Passphrase == "" {
		p.addf("no group key: set --key-file FILE (64 hex digits), group.passphrase, or the COOPCC_PASSPHRASE environment variable")
	}
	if g.KeyFile != "" && g.Passphrase != "" {
		p.addf("group.key_file and group.passphrase are both set: use one of them")
	}
	if g.Port == 0 {
		p.addf("group.port is 0: set a UDP port, e.g. 51300")
	}
	if g.Transport != "ipv4" && g.Transport != "ipv6" {
		p.addf("group.transport %q: use \"ipv4\" (broadcast) or \"ipv6\" (link-local multicast)", g.Transport)
	}
	p.checkInterval("group.interval", g.Interval.Duration, 10*time.Millisecond, time.Minute)
	if g.ClockSkew < -time.Hour || g.ClockSkew > time.Hour {
		p.addf("--clock-skew %v: use a skew within ±1h", g.ClockSkew)
	}
	if g.ExpiryIntervals < 1 || g.ExpiryIntervals > 1000 {
		p.addf("group.expiry_intervals %d: use 1..1000 missed intervals", g.ExpiryIntervals)
	}
}

// check checks that a policy is named and that it reads every parameter
// given (see checkParamKeys).
func (pc PolicyConfig) check(p *problems) {
	if pc.Name == "" {
		p.addf("policy.name is empty: set --policy NAME")
	} else if err := checkParamKeys(pc.Name, pc.Params); err != nil {
		p.add(err)
	}
}

// checkPolicyValues checks the policy's parameter values (policy.Params'
// Validate: ranges and combinations), where its keys are known: a bad value
// is then reported with the rest, before anything is set up.
func (c Config) checkPolicyValues(p *problems) {
	var params policy.Params
	if c.DecodePolicyParams(&params) != nil {
		return // the unknown key is reported by PolicyConfig.check
	}
	if err := params.Validate(); err != nil {
		p.addf("policy.params: %v", err)
	}
}

// check checks the flow filter's destinations and ports.
func (m ManagedConfig) check(p *problems) {
	for _, s := range m.Dst {
		if _, err := monitor.ParsePrefix(s); err != nil {
			p.addf("managed.dst %q is not an address or prefix (write e.g. \"10.0.0.0/8\" or \"2001:db8::1\")", s)
		}
	}
	if slices.Contains(m.Ports, 0) {
		p.addf("managed.ports contains 0: list destination ports 1..65535")
	}
}

// check checks the lease and the names of the backend and receive modes.
func (d DatapathConfig) check(p *problems) {
	p.checkInterval("datapath.lease", d.Lease.Duration, 100*time.Millisecond, time.Hour)
	switch d.Backend {
	case "auto", "struct_ops", "sockops":
	default:
		p.addf("datapath.backend %q: use auto, struct_ops or sockops", d.Backend)
	}
	switch d.Receive {
	case "auto", "on", "off":
	default:
		p.addf("datapath.receive %q: use auto, on or off", d.Receive)
	}
}

// check checks the monitor period.
func (m MonitorConfig) check(p *problems) {
	p.checkInterval("monitor.interval", m.Interval.Duration, 10*time.Millisecond, time.Minute)
}

// checkLeaseCoversMonitor checks that the datapath lease outlasts two
// monitor ticks, the heartbeats that renew it.
func (c Config) checkLeaseCoversMonitor(p *problems) {
	lease, tick := c.Datapath.Lease.Duration, c.Monitor.Interval.Duration
	if lease > 0 && tick > 0 && lease < 2*tick {
		p.addf("datapath.lease %v is shorter than two monitor intervals (%v): the bounds would lapse between heartbeats; raise the lease or shorten the interval",
			lease, tick)
	}
}

// check checks the guard's windows, cost and scope; a disabled guard is
// not checked.
func (g GuardConfig) check(p *problems) {
	if !g.Enabled {
		return
	}
	p.checkInterval("guard.on_window", g.OnWindow.Duration, time.Second, 24*time.Hour)
	p.checkInterval("guard.off_window", g.OffWindow.Duration, time.Second, time.Hour)
	p.checkInterval("guard.backoff", g.Backoff.Duration, time.Second, 24*time.Hour)
	if g.Settle.Duration < 0 || g.Settle.Duration >= g.OffWindow.Duration {
		p.addf("guard.settle %v must be ≥ 0 and shorter than guard.off_window %v", g.Settle.Duration, g.OffWindow.Duration)
	}
	if g.MaxCost < 0 || g.MaxCost >= 1 {
		p.addf("guard.max_cost %v: use a fraction in [0, 1), e.g. 0.05 for 5 %%", g.MaxCost)
	}
	if g.Scope != "group" && g.Scope != "self" {
		p.addf("guard.scope %q: use \"group\" or \"self\"", g.Scope)
	}
}

// check checks the metrics address and the lock directory.
func (o ObserveConfig) check(p *problems) {
	if o.MetricsAddr != "" && !strings.Contains(o.MetricsAddr, ":") {
		p.addf("observe.metrics_addr %q: write host:port, e.g. \"127.0.0.1:9477\" or \":9477\"", o.MetricsAddr)
	}
	if o.LockDir == "" || !filepath.IsAbs(o.LockDir) {
		p.addf("observe.lock_dir %q must be an absolute directory", o.LockDir)
	}
}

// check checks the log format and level names.
func (l LogConfig) check(p *problems) {
	switch l.Format {
	case "text", "json":
	default:
		p.addf("log.format %q: use text or json", l.Format)
	}
	switch strings.ToLower(l.Level) {
	case "debug", "info", "warn", "error":
	default:
		p.addf("log.level %q: use debug, info, warn or error", l.Level)
	}
}

// Encode writes the configuration as TOML (used by `coopcc agent config`
// and tests).
func (c Config) Encode() ([]byte, error) {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(c); err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	return buf.Bytes(), nil
}

// checkParamKeys refuses policy parameters the named policy does not read
// (e.g. static_hi with coop), which would otherwise be silently ignored.
// Unknown policy names are left to the policy constructor.
func checkParamKeys(name string, params map[string]any) error {
	known, err := policy.ParamKeys(name)
	if err != nil {
		return nil
	}
	var wrong []string
	for k := range params {
		if !slices.Contains(known, k) {
			wrong = append(wrong, k)
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	slices.Sort(wrong)
	return fmt.Errorf("policy %s does not use parameter %s: its parameters are %s (docs/policies.md)",
		name, strings.Join(wrong, ", "), strings.Join(known, ", "))
}

// DecodePolicyParams decodes Policy.Params strictly into dst (a pointer to
// the policy package's Params). Keys are the Params' toml names
// ("static_hi", "bwmax"); durations are strings ("10s"); nested tables (e.g.
// [policy.params.coop]) fill nested structs. An unknown key is an error that
// names it.
func (c Config) DecodePolicyParams(dst any) error {
	if len(c.Policy.Params) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(c.Policy.Params); err != nil {
		return fmt.Errorf("policy.params: %w", err)
	}
	md, err := toml.NewDecoder(&buf).Decode(dst)
	if err != nil {
		return fmt.Errorf("policy.params: %w", err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		ks := make([]string, len(u))
		for i, k := range u {
			ks[i] = k.String()
		}
		return fmt.Errorf("unknown policy parameter %s (docs/policies.md lists them)", strings.Join(ks, ", "))
	}
	return nil
}

// SetParam sets one policy parameter from a "key=value" string (the
// --param flag): dotted keys address nested tables ("coop.target=1.2");
// the value is read as a TOML value (numbers, booleans, "quoted strings"),
// falling back to a plain string (so durations can be written bare: 10s).
func (c *Config) SetParam(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("--param %q: write key=value, e.g. static_hi=7", kv)
	}
	var val any
	var tmp map[string]any
	if _, err := toml.Decode("v = "+strings.TrimSpace(v), &tmp); err == nil {
		val = tmp["v"]
	} else {
		val = strings.TrimSpace(v)
	}
	if c.Policy.Params == nil {
		c.Policy.Params = map[string]any{}
	}
	m := c.Policy.Params
	parts := strings.Split(k, ".")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = val
	return nil
}

package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/coopcc/coopcc/emu/phy"
	"github.com/coopcc/coopcc/emu/ratectl"
)

// Scenario is one experiment: a WLAN, a wired path, terminals, traffic, the
// modes to compare, sweep axes and repetitions. docs/scenarios.md is the
// reference for every key.
type Scenario struct {
	Name        string   `toml:"name"`
	Description string   `toml:"description"`
	Modes       []string `toml:"modes"`
	Repetitions int      `toml:"repetitions"`

	WLAN      WLAN      `toml:"wlan"`
	Wired     Wired     `toml:"wired"`
	Terminals Terminals `toml:"terminals"`
	Traffic   Traffic   `toml:"traffic"`
	Sweep     Sweep     `toml:"sweep"`
	Quick     Quick     `toml:"quick"`
	Agent     Agent     `toml:"agent"`
	// Policy holds parameters per policy name ([policy.coop] bwmax_mbps = 20),
	// passed to the agents in that policy's mode.
	Policy map[string]map[string]any `toml:"policy"`
	// Faults are injected into the runs of policy modes ([[faults]]).
	Faults []Fault `toml:"faults"`

	source []byte // the TOML text as loaded
}

// WLAN describes the emulated access point and its medium.
type WLAN struct {
	PHY          string  `toml:"phy" json:"phy"`                       // 802.11b | 802.11g | 802.11n | 802.11ac
	DataMbps     float64 `toml:"data_mbps" json:"data_mbps"`           // default PHY data rate (0 = preset's)
	APQueue      string  `toml:"ap_queue" json:"ap_queue"`             // fifo | rr | priority
	APQueueSize  int     `toml:"ap_queue_size" json:"ap_queue_size"`   // frames
	StaQueueSize int     `toml:"sta_queue_size" json:"sta_queue_size"` // frames (station transmit queue)
	FER          float64 `toml:"fer" json:"fer"`                       // frame error rate, all stations
	RetryLimit   int     `toml:"retry_limit" json:"retry_limit"`       // 0 = preset's
	AMPDUMax     int     `toml:"ampdu_max" json:"ampdu_max"`           // 802.11n/ac only; 0 = preset's
	// RateControl is the AP's rate controller and the terminals' default:
	// constant (default), arf, aarf, minstrel (docs/emulator.md).
	RateControl string `toml:"rate_control" json:"rate_control,omitempty"`
	// Profile fills unset keys from a named WLAN profile (wlanProfiles).
	Profile string `toml:"profile" json:"profile,omitempty"`
	// Engine is the emulator's real-time engine: "threaded" (default) or
	// "inline" (docs/emulator.md).
	Engine string `toml:"engine" json:"engine,omitempty"`
	// NeighbourLoad is another network on the same channel: one of its
	// stations offers this load (Poisson, 1500-byte frames) to its own AP,
	// contending for the air (0 = none; docs/emulator.md).
	NeighbourLoad Rate `toml:"neighbour_load" json:"neighbour_load,omitempty"`
	// AirtimeBSSRx: the terminals' airtime counters report the time they
	// received their own network's frames, as drivers that report
	// NL80211_SURVEY_INFO_TIME_BSS_RX do (mt76; most do not).
	AirtimeBSSRx bool `toml:"airtime_bss_rx" json:"airtime_bss_rx,omitempty"`
}

// wlanProfile is a named set of [wlan] defaults standing for a testbed.
type wlanProfile struct {
	Description  string
	RateControl  string
	APQueueSize  int
	StaQueueSize int
}

// wlanProfiles are the named profiles `[wlan] profile` accepts.
//
// testbed2012 [interpretation] stands for the papers' 2012-2016 testbed
// (Nexus S phones with a BCM4329, a Planex MZK-MF300N AP; docs/collapse.md):
//   - rate control ARF at the AP and the terminals. Both devices ran vendor
//     rate control (the BCM4329 is a FullMAC chip whose firmware adapts the
//     rate; the AP a vendor driver), not Linux's Minstrel, which only drives
//     soft-MAC chips. Which algorithm those firmwares ran is not published;
//     ARF is the scheme the literature of the period describes as the one
//     commodity 802.11 hardware implements (Lacage et al., MSWiM 2004;
//     Kim et al., CARA, INFOCOM 2006; Wong et al., RRAA, MobiCom 2006).
//   - queues of 1000 frames at the AP and the terminals: Linux's default
//     txqueuelen on Ethernet-like and Wi-Fi devices of that time (1000
//     packets; Gettys & Nichols, "Bufferbloat: dark buffers in the
//     Internet", ACM Queue 2011), which is what a Linux-based AP and the
//     phones' wlan0 had in front of the driver.
var wlanProfiles = map[string]wlanProfile{
	"testbed2012": {Description: "the papers' 2012-era testbed [interpretation]: ARF at AP and terminals, 1000-frame queues",
		RateControl: "arf", APQueueSize: 1000, StaQueueSize: 1000},
}

// Wired describes the pipe between the AP and the server.
type Wired struct {
	Rate      Rate     `toml:"rate" json:"rate"`
	Delay     Duration `toml:"delay" json:"delay"` // added round-trip delay [interpretation], see docs
	QueueSize int      `toml:"queue_size" json:"queue_size"`
	Loss      float64  `toml:"loss" json:"loss"`
	// ExtraDelayStep gives terminal k (1-based) an extra (k-1)×step of wired delay.
	ExtraDelayStep Duration `toml:"extra_delay_step" json:"extra_delay_step"`
}

// Terminals describes the stations: either uniformly (count and the fields
// below) or as explicit groups ([[terminals.group]]).
type Terminals struct {
	Count      int      `toml:"count"`
	Managed    Managed  `toml:"managed"`
	PHYMbps    float64  `toml:"phy_mbps"`
	FER        float64  `toml:"fer"`
	Mobility   string   `toml:"mobility"`
	Start      Duration `toml:"start"`
	Stop       Duration `toml:"stop"`
	Stagger    Duration `toml:"stagger"` // terminal k starts at start + (k-1)×stagger
	ExtraDelay Duration `toml:"extra_delay"`
	CC         string   `toml:"cc"` // CC of unmanaged terminals in policy modes (default cubic)
	// RateControl overrides [wlan] rate_control for the terminals.
	RateControl string `toml:"rate_control"`
	// PER is a per-rate frame error table for every terminal's link
	// ({ "54" = 0.1, "48" = 0.05 }), on top of fer.
	PER map[string]float64 `toml:"per"`
	// Sysctl is set in each terminal's namespace before traffic starts
	// (net.* keys only).
	Sysctl map[string]string `toml:"sysctl"`
	Groups []Group           `toml:"group"`
}

// Group is a set of identical terminals.
type Group struct {
	Name       string   `toml:"name"`
	Count      int      `toml:"count"`
	Managed    *bool    `toml:"managed"`
	PHYMbps    float64  `toml:"phy_mbps"`
	FER        float64  `toml:"fer"`
	Mobility   string   `toml:"mobility"`
	Start      Duration `toml:"start"`
	Stop       Duration `toml:"stop"`
	Stagger    Duration `toml:"stagger"`
	ExtraDelay Duration `toml:"extra_delay"`
	CC         string   `toml:"cc"`
	// MaxMbps is a terminal's throughput alone (Maxᵢ of papers/003's
	// weighted fairness), when known beforehand; 0 = from reference runs.
	MaxMbps float64 `toml:"max_mbps"`
	// Direction is the group's traffic direction, "up" or "down"; ""
	// = traffic.direction. Groups of both kinds make a mixed run.
	Direction string `toml:"direction"`
	// RateControl, PER and Sysctl as in Terminals; a group's sysctls are
	// added to (and override) the [terminals] ones.
	RateControl string             `toml:"rate_control"`
	PER         map[string]float64 `toml:"per"`
	Sysctl      map[string]string  `toml:"sysctl"`
	// Policy holds per-policy parameters for this group's agents
	// ([terminals.group.policy.static] static_hi = 80), added to (and
	// overriding) the scenario's [policy.NAME] values.
	Policy map[string]map[string]any `toml:"policy"`
	// CwndBase is the base cwnd (segments) that sweep.bound_multiplier
	// multiplies for this group's terminals (papers/003 §6.2); 0 =
	// DefaultCwndBase.
	CwndBase int `toml:"cwnd_base"`
}

// Traffic describes the load every terminal offers.
type Traffic struct {
	Tool      string   `toml:"tool"`      // iperf3
	Direction string   `toml:"direction"` // up (terminal → server) | down
	Duration  Duration `toml:"duration"`  // default stop time of every terminal
	Port      int      `toml:"port"`      // first server port (one per station)
}

// Sweep lists values per axis; the runs are their cross product.
type Sweep struct {
	N           IntList    `toml:"n"`
	Delay       []Duration `toml:"delay"`
	Managed     IntList    `toml:"managed"`
	WiredRate   []Rate     `toml:"wired_rate"`
	APQueueSize IntList    `toml:"ap_queue_size"`
	Mobility    []string   `toml:"mobility"`
	// Faults lists fault sets ([[faults]] set = NAME) to run one at a
	// time; "none" = a run without them.
	Faults []string `toml:"faults"`
	// Alone lists which terminals run: "all" (every group), or a group's
	// name (its first terminal only, alone on the network: the reference
	// runs of papers/003's weighted fairness).
	Alone []string `toml:"alone"`
	// BoundMultiplier sweeps the static policy's bounds as papers/003's
	// calibration does: with multiplier k each managed terminal gets
	// static_lo = (k−1)·base and static_hi = k·base, base its group's
	// cwnd_base.
	BoundMultiplier IntList `toml:"bound_multiplier"`
}

// Quick holds the reductions `--quick` applies: a shorter duration (all
// start/stop times scale with it), fewer repetitions, fewer sweep values.
type Quick struct {
	Duration    Duration   `toml:"duration"`
	Repetitions int        `toml:"repetitions"`
	Modes       []string   `toml:"modes"`
	N           IntList    `toml:"n"`
	Delay       []Duration `toml:"delay"`
	Managed     IntList    `toml:"managed"`
	WiredRate   []Rate     `toml:"wired_rate"`
}

// Agent holds how the lab runs `coopcc agent` in policy modes.
type Agent struct {
	MonitorInterval Duration `toml:"monitor_interval"` // default: the agent's
	Lease           Duration `toml:"lease"`            // default: the agent's
	Args            []string `toml:"args"`             // extra flags
	// On is where the agent runs: AgentOnTerminals (default, one per
	// managed terminal) or AgentOnServer (one in the server's namespace
	// that bounds the cwnd of what it sends to the managed terminals: a
	// sender-side middleware for downloads, as papers/002's lower bound
	// would be deployed).
	On string `toml:"on"`
}

// Where the agent runs (Agent.On).
const (
	AgentOnTerminals = "terminals"
	AgentOnServer    = "server"
)

// Defaults used when a scenario leaves a key out.
const (
	DefaultPHY          = "802.11g"
	DefaultAPQueue      = "fifo"
	DefaultAPQueueSize  = 100
	DefaultStaQueueSize = 1000
	DefaultWiredQueue   = 1000
	DefaultDuration     = 60 * time.Second
	DefaultPort         = 5201
	MaxTerminals        = 200
)

// PHY presets: default data rate and the rates a station may use.
var phyPresets = map[string]struct {
	data  float64
	rates []float64
}{
	"802.11b":  {11, []float64{1, 2, 5.5, 11}},
	"802.11g":  {54, []float64{1, 2, 5.5, 6, 9, 11, 12, 18, 24, 36, 48, 54}},
	"802.11n":  {150, nil}, // MCS rates: any positive value accepted
	"802.11ac": {433.3, nil},
}

// PHYNames returns the known PHY presets.
func PHYNames() []string {
	out := make([]string, 0, len(phyPresets))
	for k := range phyPresets {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var apQueueModes = []string{"fifo", "rr", "priority"}

// mobilityPresets are the emulator's built-in mobility traces (papers/002).
var mobilityPresets = []string{"walk", "drive", "parked"}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// Parse decodes a scenario strictly (an unknown key is an error that names
// it), applies defaults and validates it.
func Parse(data []byte) (*Scenario, error) {
	var s Scenario
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&s)
	if err != nil {
		return nil, fmt.Errorf("decode scenario: %w", err)
	}
	for _, k := range md.Undecoded() {
		// [policy.NAME] tables are kept whole (map[string]any), nested
		// ones included ([policy.coop] coop = {busy_cap = 2}); the agent
		// checks them against the policy's parameters.
		if len(k) > 2 && k[0] == "policy" {
			continue
		}
		return nil, fmt.Errorf("scenario: unknown key %q (see docs/scenarios.md for the schema)", k.String())
	}
	s.source = append([]byte(nil), data...)
	s.applyDefaults()
	if err := s.Validate(); err != nil {
		if s.Name != "" {
			return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return &s, nil
}

// LoadFile reads and parses a scenario file.
func LoadFile(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return s, nil
}

// Source returns the TOML text the scenario was parsed from.
func (s *Scenario) Source() []byte { return s.source }

// CheckSysctl accepts a per-terminal sysctl: a net.* key (a namespace's
// own sysctls; anything else would change the host) made of lower-case
// letters, digits, '_', '-' and dots, and a one-line value.
func CheckSysctl(key, value string) error {
	if !strings.HasPrefix(key, "net.") || strings.Contains(key, "..") || strings.HasSuffix(key, ".") {
		return fmt.Errorf("sysctl %q: only net.* keys can be set per terminal (they are per network namespace)", key)
	}
	for _, c := range key {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("sysctl %q: invalid character %q", key, c)
		}
	}
	if strings.TrimSpace(value) == "" || strings.ContainsAny(value, "\n\r") {
		return fmt.Errorf("sysctl %s: value %q must be one non-empty line", key, value)
	}
	return nil
}

func (s *Scenario) applyDefaults() {
	if s.Repetitions == 0 {
		s.Repetitions = 1
	}
	if s.WLAN.PHY == "" {
		s.WLAN.PHY = DefaultPHY
	}
	if p, ok := phyPresets[s.WLAN.PHY]; ok && s.WLAN.DataMbps == 0 {
		s.WLAN.DataMbps = p.data
	}
	if pr, ok := wlanProfiles[s.WLAN.Profile]; ok {
		if s.WLAN.RateControl == "" {
			s.WLAN.RateControl = pr.RateControl
		}
		if s.WLAN.APQueueSize == 0 {
			s.WLAN.APQueueSize = pr.APQueueSize
		}
		if s.WLAN.StaQueueSize == 0 {
			s.WLAN.StaQueueSize = pr.StaQueueSize
		}
	}
	if s.WLAN.APQueue == "" {
		s.WLAN.APQueue = DefaultAPQueue
	}
	if s.WLAN.APQueueSize == 0 {
		s.WLAN.APQueueSize = DefaultAPQueueSize
	}
	if s.WLAN.StaQueueSize == 0 {
		s.WLAN.StaQueueSize = DefaultStaQueueSize
	}
	if s.Wired.Rate == 0 {
		s.Wired.Rate = 100e6
	}
	if s.Wired.QueueSize == 0 {
		s.Wired.QueueSize = DefaultWiredQueue
	}
	if s.Traffic.Tool == "" {
		s.Traffic.Tool = "iperf3"
	}
	if s.Agent.On == "" {
		s.Agent.On = AgentOnTerminals
	}
	if s.Traffic.Direction == "" {
		s.Traffic.Direction = "up"
	}
	if s.Traffic.Duration == 0 {
		s.Traffic.Duration = Duration(DefaultDuration)
	}
	if s.Traffic.Port == 0 {
		s.Traffic.Port = DefaultPort
	}
	if !s.Terminals.Managed.set && len(s.Terminals.Groups) == 0 {
		s.Terminals.Managed = Managed{All: true, set: true}
	}
	if s.Terminals.CC == "" {
		s.Terminals.CC = "cubic"
	}
}

// Validate checks every field and returns the first problem, worded so the
// user knows what to change.
func (s *Scenario) Validate() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if !nameRE.MatchString(s.Name) {
		add("name %q: want 1-40 characters of a-z, 0-9, '-' or '_'", s.Name)
	}
	s.checkModes(add)
	if s.Repetitions < 1 || s.Repetitions > 100 {
		add("repetitions %d: want 1..100", s.Repetitions)
	}
	for name := range s.Policy {
		if !isPolicy(name) {
			add("policy.%s: unknown policy (known: %s)", name, strings.Join(PolicyNames(), ", "))
		}
	}
	s.checkWLAN(add)
	s.checkWired(add)
	s.checkTraffic(add)
	if len(s.Terminals.Groups) > 0 {
		s.checkGroups(add)
	} else {
		s.checkTerminalCount(add)
	}
	s.checkTerminalsCommon(add)
	s.checkSweep(add)
	s.checkFaults(add, s.maxTerminals())
	s.checkCalibration(add)
	if s.Quick.Duration != 0 && s.Quick.Duration.D() < time.Second {
		add("quick.duration %v: want at least 1s", s.Quick.Duration)
	}
	if s.Quick.Repetitions < 0 || s.Quick.Repetitions > s.Repetitions {
		add("quick.repetitions %d: want 0..repetitions (%d)", s.Quick.Repetitions, s.Repetitions)
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// checkModes checks modes and quick.modes.
func (s *Scenario) checkModes(add func(string, ...any)) {
	if len(s.Modes) == 0 {
		add("modes: list at least one mode (known: %s)", strings.Join(KnownModes(), ", "))
	}
	seen := map[string]bool{}
	for _, m := range s.Modes {
		md, err := ParseMode(m)
		if err != nil {
			add("modes: %v", err)
			continue
		}
		if seen[md.Name] {
			add("modes: %q listed twice", md.Name)
		}
		seen[md.Name] = true
	}
	for _, m := range s.Quick.Modes {
		if _, err := ParseMode(m); err != nil {
			add("quick.modes: %v", err)
		}
	}
}

// checkWLAN checks the [wlan] table.
func (s *Scenario) checkWLAN(add func(string, ...any)) {
	if _, ok := phyPresets[s.WLAN.PHY]; !ok {
		add("wlan.phy %q: want one of %s", s.WLAN.PHY, strings.Join(PHYNames(), ", "))
	}
	s.checkRate(add, "wlan.data_mbps", s.WLAN.DataMbps)
	if !contains(apQueueModes, s.WLAN.APQueue) {
		add("wlan.ap_queue %q: want one of %s", s.WLAN.APQueue, strings.Join(apQueueModes, ", "))
	}
	if s.WLAN.APQueueSize < 1 || s.WLAN.APQueueSize > 100000 {
		add("wlan.ap_queue_size %d: want 1..100000 frames", s.WLAN.APQueueSize)
	}
	if s.WLAN.StaQueueSize < 1 || s.WLAN.StaQueueSize > 100000 {
		add("wlan.sta_queue_size %d: want 1..100000 frames", s.WLAN.StaQueueSize)
	}
	checkProbability(add, "wlan.fer", s.WLAN.FER)
	if s.WLAN.RetryLimit < 0 || s.WLAN.RetryLimit > 255 {
		add("wlan.retry_limit %d: want 0..255 (0 = the preset's)", s.WLAN.RetryLimit)
	}
	if _, ok := wlanProfiles[s.WLAN.Profile]; s.WLAN.Profile != "" && !ok {
		add("wlan.profile %q: want one of %s", s.WLAN.Profile, strings.Join(slices.Sorted(maps.Keys(wlanProfiles)), ", "))
	}
	checkRateControl(add, "wlan.rate_control", s.WLAN.RateControl)
	if e := s.WLAN.Engine; e != "" && e != "threaded" && e != "inline" {
		add("wlan.engine %q: want \"threaded\" or \"inline\"", e)
	}
	if s.WLAN.AMPDUMax < 0 || s.WLAN.AMPDUMax > 256 {
		add("wlan.ampdu_max %d: want 0..256 (0 = the preset's)", s.WLAN.AMPDUMax)
	}
	if s.WLAN.NeighbourLoad < 0 || s.WLAN.NeighbourLoad > 10e9 {
		add("wlan.neighbour_load %v: want 0 (none) up to the PHY's rate", s.WLAN.NeighbourLoad)
	}
}

// checkWired checks the [wired] table.
func (s *Scenario) checkWired(add func(string, ...any)) {
	if s.Wired.Rate < 1e5 || s.Wired.Rate > 100e9 {
		add("wired.rate %v: want 100kbps..100Gbps", s.Wired.Rate)
	}
	if s.Wired.Delay.D() > 10*time.Second {
		add("wired.delay %v: want at most 10s", s.Wired.Delay)
	}
	if s.Wired.QueueSize < 1 || s.Wired.QueueSize > 1000000 {
		add("wired.queue_size %d: want 1..1000000 packets", s.Wired.QueueSize)
	}
	checkProbability(add, "wired.loss", s.Wired.Loss)
}

// checkTraffic checks the [traffic] table and the agent's on-off schedule.
func (s *Scenario) checkTraffic(add func(string, ...any)) {
	if s.Traffic.Tool != "iperf3" {
		add("traffic.tool %q: only \"iperf3\" is supported", s.Traffic.Tool)
	}
	if s.Traffic.Direction != "up" && s.Traffic.Direction != "down" {
		add("traffic.direction %q: want \"up\" (terminal to server) or \"down\"", s.Traffic.Direction)
	}
	s.validateAgentOn(add)
	if s.Traffic.Duration.D() < time.Second || s.Traffic.Duration.D() > 24*time.Hour {
		add("traffic.duration %v: want 1s..24h", s.Traffic.Duration)
	}
	if s.Traffic.Port < 1024 || s.Traffic.Port > 60000 {
		add("traffic.port %d: want 1024..60000", s.Traffic.Port)
	}
}

// checkGroups checks terminals given as [[terminals.group]] entries.
func (s *Scenario) checkGroups(add func(string, ...any)) {
	t := s.Terminals
	if t.Count != 0 {
		add("terminals.count: give either count or [[terminals.group]] entries, not both")
	}
	if t.Managed.set {
		add("terminals.managed: with groups, set managed in each [[terminals.group]]")
	}
	if len(s.Sweep.N) > 0 || len(s.Quick.N) > 0 {
		add("sweep.n: cannot sweep the terminal count when terminals are given as groups")
	}
	if len(s.Sweep.Managed) > 0 || len(s.Quick.Managed) > 0 {
		add("sweep.managed: cannot sweep the managed count when terminals are given as groups")
	}
	names := map[string]bool{}
	for i, g := range t.Groups {
		key := fmt.Sprintf("terminals.group[%d]", i)
		if g.Name != "" {
			if !nameRE.MatchString(g.Name) {
				add("%s.name %q: want a-z, 0-9, '-' or '_'", key, g.Name)
			}
			if names[g.Name] {
				add("%s.name %q: used twice", key, g.Name)
			}
			names[g.Name] = true
		}
		if g.Count < 1 {
			add("%s.count %d: want at least 1", key, g.Count)
		}
		s.checkRate(add, key+".phy_mbps", g.PHYMbps)
		if g.MaxMbps < 0 {
			add("%s.max_mbps %g: want 0 (unknown) or more", key, g.MaxMbps)
		}
		checkProbability(add, key+".fer", g.FER)
		s.checkTiming(add, key, g.Start, g.Stop)
		if g.CC != "" && !contains(kernelCCs, g.CC) {
			add("%s.cc %q: want one of %s", key, g.CC, strings.Join(kernelCCs, ", "))
		}
		if g.Direction != "" && g.Direction != "up" && g.Direction != "down" {
			add("%s.direction %q: want \"up\", \"down\" or leave it out for traffic.direction", key, g.Direction)
		}
		if g.Mobility != "" {
			if err := checkMobility(g.Mobility); err != nil {
				add("%s.mobility: %v", key, err)
			}
		}
	}
	if total := s.maxTerminals(); total > MaxTerminals {
		add("terminals: %d in all, at most %d", total, MaxTerminals)
	}
}

// checkTerminalCount checks terminals given as a count (no groups).
func (s *Scenario) checkTerminalCount(add func(string, ...any)) {
	t := s.Terminals
	if t.Count < 1 && len(s.Sweep.N) == 0 {
		add("terminals.count %d: want at least 1 (or list values in sweep.n)", t.Count)
	}
	if t.Count > MaxTerminals {
		add("terminals.count %d: at most %d", t.Count, MaxTerminals)
	}
	if !t.Managed.All && t.Managed.Count > max(t.Count, maxInt(s.Sweep.N)) {
		add("terminals.managed %d: more than the %d terminals", t.Managed.Count, max(t.Count, maxInt(s.Sweep.N)))
	}
	s.checkRate(add, "terminals.phy_mbps", t.PHYMbps)
	s.checkTiming(add, "terminals", t.Start, t.Stop)
	if t.Mobility != "" {
		if err := checkMobility(t.Mobility); err != nil {
			add("terminals.mobility: %v", err)
		}
	}
}

// checkTerminalsCommon checks what the [terminals] table and its groups
// share: frame error rates, congestion control, rate control, PER tables
// and sysctls.
func (s *Scenario) checkTerminalsCommon(add func(string, ...any)) {
	t := s.Terminals
	checkProbability(add, "terminals.fer", t.FER)
	if !contains(kernelCCs, t.CC) {
		add("terminals.cc %q: want one of %s", t.CC, strings.Join(kernelCCs, ", "))
	}
	checkRateControl(add, "terminals.rate_control", t.RateControl)
	s.checkPER(add, "terminals.per", t.PER)
	checkSysctls(add, "terminals.sysctl", t.Sysctl)
	for i, g := range t.Groups {
		key := fmt.Sprintf("terminals.group[%d]", i)
		checkRateControl(add, key+".rate_control", g.RateControl)
		s.checkPER(add, key+".per", g.PER)
		checkSysctls(add, key+".sysctl", g.Sysctl)
	}
}

// checkSweep checks the [sweep] and [quick] lists.
func (s *Scenario) checkSweep(add func(string, ...any)) {
	checkN := func(key string, l IntList) {
		for _, n := range l {
			if n < 1 || n > MaxTerminals {
				add("%s: %d terminals, want 1..%d", key, n, MaxTerminals)
			}
		}
		if dup := firstDup(l); dup != "" {
			add("%s: value %s listed twice", key, dup)
		}
	}
	checkN("sweep.n", s.Sweep.N)
	checkN("quick.n", s.Quick.N)
	for _, l := range []struct {
		key string
		v   IntList
	}{{"sweep.managed", s.Sweep.Managed}, {"quick.managed", s.Quick.Managed}} {
		for _, k := range l.v {
			if k < 0 || k > MaxTerminals {
				add("%s: %d managed terminals, want 0..%d", l.key, k, MaxTerminals)
			}
		}
		if dup := firstDup(l.v); dup != "" {
			add("%s: value %s listed twice", l.key, dup)
		}
	}
	for _, d := range append(append([]Duration{}, s.Sweep.Delay...), s.Quick.Delay...) {
		if d.D() > 10*time.Second {
			add("sweep.delay %v: want at most 10s", d)
		}
	}
	if dup := firstDup(s.Sweep.Delay); dup != "" {
		add("sweep.delay: value %s listed twice", dup)
	}
	for _, r := range append(append([]Rate{}, s.Sweep.WiredRate...), s.Quick.WiredRate...) {
		if r < 1e5 || r > 100e9 {
			add("sweep.wired_rate %v: want 100kbps..100Gbps", r)
		}
	}
	for _, q := range s.Sweep.APQueueSize {
		if q < 1 || q > 100000 {
			add("sweep.ap_queue_size %d: want 1..100000 frames", q)
		}
	}
	for _, m := range s.Sweep.Mobility {
		if err := checkMobility(m); err != nil {
			add("sweep.mobility: %v", err)
		}
	}
}

// maxTerminals is the most terminals a run of the scenario has: the groups'
// counts summed, or the largest of terminals.count, sweep.n and quick.n.
func (s *Scenario) maxTerminals() int {
	t := s.Terminals
	if len(t.Groups) == 0 {
		return max(t.Count, maxInt(s.Sweep.N), maxInt(s.Quick.N))
	}
	n := 0
	for _, g := range t.Groups {
		n += g.Count
	}
	return n
}

// checkRate checks a PHY rate (Mbit/s; 0 = the preset's) against the rates
// of wlan.phy (nothing when the PHY is unknown: that has its own error).
func (s *Scenario) checkRate(add func(string, ...any), key string, v float64) {
	p, ok := phyPresets[s.WLAN.PHY]
	if v == 0 || !ok {
		return
	}
	if v < 0 {
		add("%s %v: must be positive", key, v)
		return
	}
	if p.rates == nil || slices.Contains(p.rates, v) {
		return
	}
	add("%s %v Mbps: not a %s rate (want one of %v)", key, v, s.WLAN.PHY, p.rates)
}

// checkPER checks a packet error rate table keyed by the emulator's PHY
// rates of wlan.phy.
func (s *Scenario) checkPER(add func(string, ...any), key string, m map[string]float64) {
	emuPHY, _ := phy.Lookup(strings.TrimPrefix(s.WLAN.PHY, "802.11")) // the emulator's rate set
	for _, k := range slices.Sorted(maps.Keys(m)) {
		r, err := strconv.ParseFloat(k, 64)
		if err != nil || !slices.Contains(emuPHY.Rates, r) {
			add("%s key %q: not a %s rate of the emulator (want one of %v)", key, k, s.WLAN.PHY, emuPHY.Rates)
		}
		if v := m[k]; v < 0 || v > 1 {
			add("%s[%q] = %v: want 0..1", key, k, v)
		}
	}
}

// checkProbability checks a frame error or loss rate: [0, 1).
func checkProbability(add func(string, ...any), key string, v float64) {
	if v < 0 || v >= 1 {
		add("%s %v: want a probability in [0, 1)", key, v)
	}
}

// checkRateControl checks a rate-control algorithm's name.
func checkRateControl(add func(string, ...any), key, v string) {
	if err := ratectl.CheckKind(v); err != nil {
		add("%s: %v", key, err)
	}
}

// checkSysctls checks a table of sysctls.
func checkSysctls(add func(string, ...any), key string, m map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := CheckSysctl(k, m[k]); err != nil {
			add("%s: %v", key, err)
		}
	}
}

func (s *Scenario) checkTiming(add func(string, ...any), key string, start, stop Duration) {
	end := stop
	if end == 0 {
		end = s.Traffic.Duration
	}
	if end <= start {
		add("%s: stop (%v) must be after start (%v)", key, end, start)
	}
	if end.D() > 24*time.Hour {
		add("%s.stop %v: want at most 24h", key, end)
	}
}

// checkMobility accepts a preset name or the path of an existing CSV trace.
func checkMobility(m string) error {
	if contains(mobilityPresets, m) {
		return nil
	}
	if strings.HasSuffix(m, ".csv") {
		if _, err := os.Stat(m); err != nil {
			return fmt.Errorf("trace %q: %w", m, err)
		}
		return nil
	}
	return fmt.Errorf("%q: want a preset (%s) or the path of a .csv trace", m, strings.Join(mobilityPresets, ", "))
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func maxInt(l []int) int {
	m := 0
	for _, v := range l {
		m = max(m, v)
	}
	return m
}

func firstDup[T comparable](l []T) string {
	seen := map[T]bool{}
	for _, v := range l {
		if seen[v] {
			return fmt.Sprint(v)
		}
		seen[v] = true
	}
	return ""
}

// ErrUnknown is returned when a scenario name is neither a preset
// nor a file.
var ErrUnknown = errors.New("unknown scenario")

// validateAgentOn checks agent.on: an agent on the server bounds what the
// server sends, so every terminal must download, and no fault can name a
// terminal's agent.
func (s *Scenario) validateAgentOn(add func(string, ...any)) {
	switch s.Agent.On {
	case AgentOnTerminals:
		return
	case AgentOnServer:
	default:
		add("agent.on %q: want %q (an agent on each managed terminal) or %q (one on the server, for downloads)", s.Agent.On, AgentOnTerminals, AgentOnServer)
		return
	}
	down := len(s.Terminals.Groups) > 0 || s.Traffic.Direction == "down"
	for _, g := range s.Terminals.Groups {
		dir := g.Direction // a group's own, else traffic.direction (buildRun)
		if dir == "" {
			dir = s.Traffic.Direction
		}
		down = down && dir == "down"
	}
	if !down {
		add("agent.on = %q bounds what the server sends: every terminal must download (set traffic.direction = \"down\" and no group direction = \"up\")", AgentOnServer)
	}
	if len(s.Faults) > 0 {
		add("agent.on = %q runs no agent on the terminals for [[faults]] to act on: drop the faults or the key", AgentOnServer)
	}
}

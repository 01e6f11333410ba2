// Package emu is the WLAN testbed emulator: an infrastructure 802.11 BSS
// (stations and an AP contending with DCF, package dcf) plus a Dummynet-style
// wired pipe (package wire) between TAP devices in network namespaces, run as
// one discrete-event simulation (package des) in real time, or in virtual
// time for validation against Bianchi's model (package bianchi).
//
// Config is the TOML file `coopcc emu run --config` reads; the lab builds one
// in Go and encodes it.
package emu

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/coopcc/coopcc/emu/phy"
	"github.com/coopcc/coopcc/emu/ratectl"
	"github.com/coopcc/coopcc/emu/wire"
)

// Config is the emulator's configuration (TOML).
type Config struct {
	PHY  string `toml:"phy"`  // preset: b, g, n, ac (default g)
	Seed uint64 `toml:"seed"` // random seed (default 1)
	// RetryLimit overrides the preset's attempts per frame (0 = preset).
	RetryLimit int `toml:"retry_limit"`
	// AMPDUMaxFrames / AMPDUMaxBytes override the preset's aggregation limits
	// (n and ac only; 0 = preset).
	AMPDUMaxFrames int `toml:"ampdu_max_frames"`
	AMPDUMaxBytes  int `toml:"ampdu_max_bytes"`
	// LatenessThresholdUs: a run whose p99 scheduling lateness exceeds it is
	// marked invalid (default 200: below one 1500-byte 802.11g frame time,
	// above the p99 this shared machine gives under normal load).
	LatenessThresholdUs float64 `toml:"lateness_threshold_us"`
	// RTPriority is the SCHED_FIFO priority of the real-time loop's thread
	// (default 10; -1 = ordinary scheduling). Needs root.
	RTPriority int `toml:"rt_priority"`
	// SpinMaxUs caps the real-time loop's adaptive busy-wait before each
	// event (default 100 µs; lower saves CPU at the cost of precision).
	SpinMaxUs float64 `toml:"spin_max_us"`
	// Engine is the real-time engine: "threaded" (TAP writes on writer
	// threads) or "inline" (writes on the timing thread, the engine before
	// the threaded one). Default: threaded for 802.11n/ac, inline for b/g,
	// whose frame rates the inline loop sustains (both reach the medium's
	// capacity in `emu bench`) while the writer threads take CPU from the
	// senders on a small machine. docs/emulator.md.
	Engine string `toml:"engine"`
	// SampleIntervalMs is the AP queue sampling period for apqueue.csv (default 10).
	SampleIntervalMs float64 `toml:"sample_interval_ms"`
	// AirtimeDir, when set, is where the emulator keeps each station's
	// airtime counters (package airtime's file form, AirtimeFile: channel,
	// busy, own tx and rx time), rewritten every MediumInterval, as a
	// station's Wi-Fi driver reports them through nl80211. The lab hands
	// each agent its station's file.
	AirtimeDir string `toml:"airtime_dir"`
	// AirtimeBSSRx: the airtime files also report the time each station
	// received this network's frames (bss_rx_us: every busy time that was
	// neither its own transmissions nor the neighbour network's), as a
	// driver that reports NL80211_SURVEY_INFO_TIME_BSS_RX does (mt76);
	// without it they do not, as most drivers do not.
	AirtimeBSSRx bool `toml:"airtime_bss_rx,omitempty"`
	// Neighbour is another network on the same channel (none by default).
	Neighbour NeighbourConfig `toml:"neighbour,omitempty"`

	AP       APConfig   `toml:"ap"`
	Wire     WireConfig `toml:"wire"`
	Server   Endpoint   `toml:"server"`
	Stations []Station  `toml:"stations"`
}

// APConfig is the access point's downlink queue and channel access.
type APConfig struct {
	// Queue: "fifo" (one drop-tail FIFO, default), "rr" (per-station round
	// robin), "priority" (FIFO, with the AP's own AIFSN/CWmin/CWmax below).
	Queue       string `toml:"queue"`
	QueueFrames int    `toml:"queue_frames"` // total frames (default 1000)
	// Channel access in "priority" mode (defaults AIFSN 2, CWmin 3, CWmax 7:
	// 802.11e AC_VO's contention window).
	AIFSN int    `toml:"aifsn"`
	CWMin int    `toml:"cwmin"`
	CWMax int    `toml:"cwmax"`
	MAC   string `toml:"mac"` // BSSID; informational
	// RateControl is the AP's rate controller for its link to each station
	// (one instance per station): constant (default), arf, aarf, minstrel.
	RateControl string `toml:"rate_control"`
}

// WireConfig is the wired path between the AP and the server.
type WireConfig struct {
	Up   wire.Config `toml:"up"`   // AP -> server
	Down wire.Config `toml:"down"` // server -> AP
}

// Endpoint is a TAP device the emulator creates in a namespace.
type Endpoint struct {
	Netns string `toml:"netns"` // existing network namespace (ip netns name)
	Iface string `toml:"iface"` // interface name inside it (default wlan0 / eth0)
	MAC   string `toml:"mac"`   // default: deterministic 02:c0:0c:00:XX:YY
}

// Station is one terminal.
type Station struct {
	Name string `toml:"name"`
	Endpoint
	RateMbps     float64 `toml:"rate_mbps"`      // PHY rate (0 = preset's)
	FER          float64 `toml:"fer"`            // frame error rate per attempt, both directions
	ExtraDelayMs float64 `toml:"extra_delay_ms"` // added to the wired delay of this station's traffic, both directions
	QueueFrames  int     `toml:"queue_frames"`   // transmit queue (default 1000)
	// Mobility: a preset (walk, drive, parked) or a CSV file
	// (time_s,rate_mbps,fer,associated) that overrides rate/FER/association over time.
	Mobility string `toml:"mobility"`
	// RateControl is the station's rate controller for its link to the AP:
	// constant (default: every frame at rate_mbps), arf, aarf, minstrel
	// (they choose among the preset's rates up to rate_mbps).
	RateControl string `toml:"rate_control"`
	// PER is a per-rate frame error rate of this station's link, both
	// directions, on top of fer: keys are rates in Mbps ("54", "5.5").
	PER map[string]float64 `toml:"per,omitempty"`
}

// PERTable parses the station's per-rate PER table (nil when empty).
func (s Station) PERTable(p phy.Preset) (map[float64]float64, error) {
	if len(s.PER) == 0 {
		return nil, nil
	}
	out := make(map[float64]float64, len(s.PER))
	for k, v := range s.PER {
		r, err := strconv.ParseFloat(k, 64)
		if err != nil || !slices.Contains(p.Rates, r) {
			return nil, fmt.Errorf("station %s: per key %q is not a %s rate (%v)", s.Name, k, p.Name, p.Rates)
		}
		if v < 0 || v > 1 {
			return nil, fmt.Errorf("station %s: per[%s] = %v outside 0..1", s.Name, k, v)
		}
		out[r] = v
	}
	return out, nil
}

// LoadConfig reads and checks a TOML config file.
func LoadConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("read emulator config: %w", err)
	}
	md, err := toml.Decode(string(b), &c)
	if err != nil {
		return c, fmt.Errorf("parse emulator config %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return c, fmt.Errorf("emulator config %s: unknown key %q (see docs/emulator.md for the schema)", path, und[0].String())
	}
	if err := c.Normalize(); err != nil {
		return c, fmt.Errorf("emulator config %s: %w", path, err)
	}
	return c, nil
}

// Encode writes the config as TOML.
func (c Config) Encode(w interface{ Write([]byte) (int, error) }) error {
	return toml.NewEncoder(w).Encode(c)
}

// Normalize fills defaults and validates; it is idempotent.
func (c *Config) Normalize() error {
	if c.PHY == "" {
		c.PHY = "g"
	}
	p, err := c.Preset()
	if err != nil {
		return err
	}
	if err := c.normalizeEngine(); err != nil {
		return err
	}
	if err := c.normalizeAP(); err != nil {
		return err
	}
	if err := c.Neighbour.normalize(p); err != nil {
		return err
	}
	if err := c.Wire.Up.Validate(); err != nil {
		return fmt.Errorf("wire.up: %w", err)
	}
	if err := c.Wire.Down.Validate(); err != nil {
		return fmt.Errorf("wire.down: %w", err)
	}
	if c.Server.Iface == "" {
		c.Server.Iface = "eth0"
	}
	if c.Server.MAC == "" {
		c.Server.MAC = "02:c0:0c:00:ff:01"
	}
	if _, err := net.ParseMAC(c.Server.MAC); err != nil {
		return fmt.Errorf("server.mac: %w", err)
	}
	if len(c.Stations) == 0 {
		return fmt.Errorf("no stations: add at least one [[stations]] table")
	}
	if len(c.Stations) > 250 {
		return fmt.Errorf("%d stations: at most 250", len(c.Stations))
	}
	names := map[string]bool{}
	for i := range c.Stations {
		s := &c.Stations[i]
		if err := s.normalize(i, p); err != nil {
			return err
		}
		if names[s.Name] {
			return fmt.Errorf("station name %q used twice", s.Name)
		}
		names[s.Name] = true
	}
	return nil
}

// normalizeEngine fills in and checks the engine's own settings: seed,
// lateness threshold, scheduling, sampling and the engine kind.
func (c *Config) normalizeEngine() error {
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.LatenessThresholdUs == 0 {
		c.LatenessThresholdUs = 200
	}
	if c.RTPriority == 0 {
		c.RTPriority = 10
	}
	if c.RTPriority > 99 {
		return fmt.Errorf("rt_priority %d: use 1..99, or -1 for ordinary scheduling", c.RTPriority)
	}
	if c.SampleIntervalMs == 0 {
		c.SampleIntervalMs = 10
	}
	if c.SpinMaxUs == 0 {
		c.SpinMaxUs = 100
	}
	switch c.Engine {
	case "":
		c.Engine = "threaded"
		if p := strings.TrimPrefix(c.PHY, "802.11"); p == "b" || p == "g" {
			c.Engine = "inline"
		}
	case "threaded", "inline":
	default:
		return fmt.Errorf("engine %q: use threaded or inline", c.Engine)
	}
	if c.LatenessThresholdUs < 0 || c.SampleIntervalMs < 0 || c.SpinMaxUs < 0 || c.RetryLimit < 0 || c.AMPDUMaxFrames < 0 || c.AMPDUMaxBytes < 0 {
		return fmt.Errorf("lateness_threshold_us, sample_interval_ms, retry_limit and ampdu limits must not be negative")
	}
	return nil
}

// normalizeAP fills in and checks the [ap] table.
func (c *Config) normalizeAP() error {
	switch c.AP.Queue {
	case "":
		c.AP.Queue = "fifo"
	case "fifo", "rr", "priority":
	default:
		return fmt.Errorf("ap.queue %q: use fifo, rr or priority", c.AP.Queue)
	}
	if c.AP.QueueFrames == 0 {
		c.AP.QueueFrames = 1000
	}
	if c.AP.Queue == "priority" {
		if c.AP.AIFSN == 0 {
			c.AP.AIFSN = 2
		}
		if c.AP.CWMin == 0 {
			c.AP.CWMin = 3
		}
		if c.AP.CWMax == 0 {
			c.AP.CWMax = 7
		}
	}
	if err := ratectl.CheckKind(c.AP.RateControl); err != nil {
		return fmt.Errorf("ap.rate_control: %w", err)
	}
	if c.AP.AIFSN < 0 || c.AP.CWMin < 0 || c.AP.CWMax < c.AP.CWMin || c.AP.QueueFrames < 0 {
		return fmt.Errorf("ap: need aifsn >= 0, 0 <= cwmin <= cwmax, queue_frames >= 0")
	}
	return nil
}

// normalize fills in and checks the i-th (from 0) [[stations]] table on
// PHY preset p.
func (s *Station) normalize(i int, p phy.Preset) error {
	if s.Name == "" {
		s.Name = fmt.Sprintf("sta%d", i+1)
	}
	if s.Iface == "" {
		s.Iface = "wlan0"
	}
	if s.MAC == "" {
		s.MAC = fmt.Sprintf("02:c0:0c:00:%02x:%02x", (i+1)>>8, (i+1)&0xff)
	}
	if _, err := net.ParseMAC(s.MAC); err != nil {
		return fmt.Errorf("station %s mac: %w", s.Name, err)
	}
	if s.QueueFrames == 0 {
		s.QueueFrames = 1000
	}
	if s.RateMbps < 0 || s.FER < 0 || s.FER > 1 || s.ExtraDelayMs < 0 || s.QueueFrames < 0 {
		return fmt.Errorf("station %s: need rate_mbps >= 0, 0 <= fer <= 1, extra_delay_ms >= 0, queue_frames >= 0", s.Name)
	}
	if err := ratectl.CheckKind(s.RateControl); err != nil {
		return fmt.Errorf("station %s rate_control: %w", s.Name, err)
	}
	if _, err := s.PERTable(p); err != nil {
		return err
	}
	if s.RateMbps > 0 && s.RateControl != "" && s.RateControl != ratectl.KindConstant && s.RateMbps < p.Rates[0] {
		return fmt.Errorf("station %s: rate_mbps %v is below every %s rate, nothing for rate control to choose", s.Name, s.RateMbps, p.Name)
	}
	if len(s.Iface) > 15 || strings.ContainsAny(s.Iface, " /") {
		return fmt.Errorf("station %s: interface name %q invalid (at most 15 characters, no spaces or slashes)", s.Name, s.Iface)
	}
	return nil
}

// Preset returns the PHY preset with the config's overrides applied.
func (c Config) Preset() (phy.Preset, error) {
	name := c.PHY
	if name == "" {
		name = "g"
	}
	p, err := phy.Lookup(name)
	if err != nil {
		return p, err
	}
	if c.RetryLimit > 0 {
		p.RetryLimit = c.RetryLimit
	}
	if c.AMPDUMaxFrames > 0 {
		p.AMPDUMaxFrames = c.AMPDUMaxFrames
	}
	if c.AMPDUMaxBytes > 0 {
		p.AMPDUMaxBytes = c.AMPDUMaxBytes
	}
	return p, p.Validate()
}

package lab

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"

	"github.com/coopcc/coopcc/emu"
	"github.com/coopcc/coopcc/emu/wire"
	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/lab/testbed"
)

// emuConfig builds the emulator's configuration for a run on a testbed.
//
// [interpretation] The scenario's wired delay is the round trip the papers'
// Dummynet added (their min RTT ≈ the configured delay), so each direction
// of the emulated wire gets half of it; the same holds for per-terminal
// extra delay.
func emuConfig(r scenario.Run, tb *testbed.Testbed) emu.Config {
	seed := fnv.New64a()
	seed.Write([]byte(r.ID))
	oneWay := func(d scenario.Duration) float64 { return float64(d.D()) / 2e6 }
	w := wire.Config{RateMbps: r.Wired.Rate.Mbps(), DelayMs: oneWay(r.Wired.Delay), QueueFrames: r.Wired.QueueSize, Loss: r.Wired.Loss}
	cfg := emu.Config{
		PHY:            strings.TrimPrefix(r.WLAN.PHY, "802.11"),
		Seed:           seed.Sum64()&0xffffffffffff | 1,
		RetryLimit:     r.WLAN.RetryLimit,
		AMPDUMaxFrames: r.WLAN.AMPDUMax,
		Engine:         r.WLAN.Engine,
		AP:             emu.APConfig{Queue: r.WLAN.APQueue, QueueFrames: r.WLAN.APQueueSize, RateControl: r.WLAN.RateControl},
		Wire:           emu.WireConfig{Up: w, Down: w},
		Server:         emu.Endpoint{Netns: tb.Server.Netns, Iface: tb.Server.Iface},
		Neighbour:      emu.NeighbourConfig{LoadMbps: r.WLAN.NeighbourLoad.Mbps()},
		AirtimeBSSRx:   r.WLAN.AirtimeBSSRx,
	}
	for i, st := range r.Stations {
		nd := tb.Stations[i]
		cfg.Stations = append(cfg.Stations, emu.Station{Name: st.Name,
			Endpoint: emu.Endpoint{Netns: nd.Netns, Iface: nd.Iface},
			RateMbps: st.PHYMbps, FER: st.FER, ExtraDelayMs: oneWay(st.ExtraDelay),
			QueueFrames: r.WLAN.StaQueueSize, Mobility: st.Mobility,
			RateControl: st.RateControl, PER: st.PER})
	}
	return cfg
}

// emuCommand writes the emulator's config for the run (into tmp, and a copy
// into the run's emu directory) and returns its command line.
func emuCommand(r scenario.Run, tb *testbed.Testbed, coopcc, tmp, out string) ([]string, error) {
	cfg := emuConfig(r, tb)
	cfg.AirtimeDir = airtimeDir(tmp)
	path := filepath.Join(tmp, "emu.toml")
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("write emulator config: %w", err)
	}
	if err := cfg.Encode(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("encode emulator config: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write emulator config: %w", err)
	}
	if b, err := os.ReadFile(path); err == nil {
		_ = os.WriteFile(filepath.Join(out, "config.toml"), b, 0o644)
	}
	return []string{coopcc, "emu", "run", "--config", path, "--out", out}, nil
}

// airtimeDir is where a run's emulator keeps the stations' airtime files
// (emu.Config.AirtimeDir), which the run's agents read as a driver's
// nl80211 counters (agent --airtime-file).
func airtimeDir(tmp string) string { return filepath.Join(tmp, "air") }

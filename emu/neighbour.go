package emu

import (
	"fmt"
	"math/rand/v2"

	"github.com/coopcc/coopcc/emu/dcf"
	"github.com/coopcc/coopcc/emu/des"
	"github.com/coopcc/coopcc/emu/phy"
)

// NeighbourConfig is another network on the same channel: one of its
// stations sends frames to its own AP, contending for the medium like
// every node of the emulated network (one collision domain), while none of
// its frames enters this network. It is what a terminal's radio sees of a
// neighbour's WLAN: busy air that is neither its own nor its network's
// (airtime.Counters.Foreign, where the driver reports its network's
// receive time: Config.AirtimeBSSRx).
type NeighbourConfig struct {
	// LoadMbps is the offered load, Mbit/s of MSDUs, as Poisson arrivals
	// (0 = no neighbour network).
	LoadMbps float64 `toml:"load_mbps,omitempty"`
	// FrameBytes is the MSDU size of its frames (default 1500).
	FrameBytes int `toml:"frame_bytes,omitempty"`
	// RateMbps is its PHY rate (0 = the preset's data rate).
	RateMbps float64 `toml:"rate_mbps,omitempty"`
}

// normalize fills in the defaults and checks the neighbour against the
// PHY p: a load the PHY could not carry at its rate is an error.
func (c *NeighbourConfig) normalize(p phy.Preset) error {
	if c.LoadMbps == 0 {
		return nil
	}
	if c.FrameBytes == 0 {
		c.FrameBytes = 1500
	}
	if c.RateMbps == 0 {
		c.RateMbps = p.DataRateMbps
	}
	switch {
	case c.LoadMbps < 0 || c.RateMbps < 0:
		return fmt.Errorf("neighbour: load_mbps %v and rate_mbps %v must not be negative", c.LoadMbps, c.RateMbps)
	case c.FrameBytes < 64 || c.FrameBytes > 2304:
		return fmt.Errorf("neighbour: frame_bytes %d: want 64..2304 (an 802.11 MSDU)", c.FrameBytes)
	case c.LoadMbps >= c.RateMbps:
		return fmt.Errorf("neighbour: load_mbps %v is not below its PHY rate %v Mbit/s: give a load the channel can carry", c.LoadMbps, c.RateMbps)
	}
	return nil
}

// neighbour is the other network's two nodes on the medium and the bytes
// its AP received.
type neighbour struct {
	sta, ap *dcf.Node
	bytes   uint64
}

// addNeighbour attaches the neighbour network's station and AP to the
// medium (after the emulated network's nodes) and starts its arrivals; nil
// without one. Its own random source leaves the emulated network's draws
// as they are without it.
func (e *Engine) addNeighbour() *neighbour {
	c := e.Cfg.Neighbour
	if c.LoadMbps == 0 {
		return nil
	}
	acc := dcf.DefaultAccess(e.PHY)
	nb := &neighbour{
		ap:  &dcf.Node{Name: "neighbour-ap", Associated: true, Access: acc, Q: dcf.NewFIFO(1), RateMbps: c.RateMbps},
		sta: &dcf.Node{Name: "neighbour-sta", Associated: true, Access: acc, Q: dcf.NewFIFO(1000), RateMbps: c.RateMbps},
	}
	e.Med.AddNode(nb.ap)
	e.Med.AddNode(nb.sta)
	rng := rand.New(rand.NewPCG(e.Cfg.Seed, 0x6e6267))
	mean := float64(c.FrameBytes*8) / c.LoadMbps * float64(des.Microsecond) // one frame's share of the load
	var arrive func()
	arrive = func() {
		e.Med.Enqueue(nb.sta, &dcf.Frame{MSDU: c.FrameBytes, To: nb.ap.ID, Origin: -1})
		e.Sim.After(des.Time(rng.ExpFloat64()*mean), arrive)
	}
	e.Sim.After(des.Time(rng.ExpFloat64()*mean), arrive)
	return nb
}

// takes reports whether to is one of the neighbour network's nodes: it
// takes the frame (its AP counts its station's; either ignores the emulated
// network's broadcasts, another BSSID's) and nothing of it enters the
// emulated network.
func (nb *neighbour) takes(to *dcf.Node, f *dcf.Frame) bool {
	if nb == nil || (to != nb.ap && to != nb.sta) {
		return false
	}
	if to == nb.ap && f.To == nb.ap.ID {
		nb.bytes += uint64(f.MSDU)
	}
	return true
}

// airtime is the air the neighbour network's attempts took so far.
func (nb *neighbour) airtime() des.Time {
	if nb == nil {
		return 0
	}
	return nb.sta.Stats.Airtime + nb.ap.Stats.Airtime
}

package emu

import (
	"fmt"
	"math/rand/v2"
	"net"

	"github.com/coopcc/coopcc/airtime"

	"github.com/coopcc/coopcc/emu/dcf"
	"github.com/coopcc/coopcc/emu/des"
	"github.com/coopcc/coopcc/emu/phy"
	"github.com/coopcc/coopcc/emu/ratectl"
	"github.com/coopcc/coopcc/emu/wire"
)

// Port is where the engine sends a frame that leaves the emulator (a TAP
// device, or a counter in benchmarks and tests).
type Port interface {
	WriteFrame(b []byte) error
}

// EthernetHeader is the length of an Ethernet II header; the rest of a frame
// read from a TAP is the MSDU carried over the air (LLC/SNAP-encapsulated).
const EthernetHeader = 14

const serverOrigin = -2

// Engine is the emulated BSS + wire as event handlers on a des.Sim: frames
// enter with FromStation/FromServer (at Sim.Now) and leave through the Ports.
// It is driven in virtual time (Sim.RunUntil) or in real time (RealTime).
type Engine struct {
	Cfg  Config
	PHY  phy.Preset
	Sim  *des.Sim
	Med  *dcf.Medium
	AP   *dcf.Node
	Stas []*dcf.Node // station i is node i+1
	Up   *wire.Pipe  // AP -> server
	Down *wire.Pipe  // server -> AP

	staPorts []Port
	srvPort  Port
	macs     map[[6]byte]int
	extra    []des.Time
	rates    []float64

	// Counters besides the nodes' and pipes' own.
	WriteErrors  uint64   // frames a port refused
	UnknownDrops uint64   // unicast from the server to an unknown MAC
	AssocDrops   []uint64 // per station: frames lost to (dis)association
	Samples      []QueueSample
	Medium       []MediumSample // every MediumInterval of emulated time
	DownBytes    uint64         // bytes delivered to stations
	UpBytes      uint64         // bytes delivered to the server

	// LinkRates, when set, is called at every queue sample (every
	// Cfg.SampleIntervalMs of emulated time) with, for each station i, the
	// frame-weighted mean PHY rate (Mbit/s) of the unicast frames it
	// delivered since the previous call; a station that delivered none keeps
	// its previous value (0 before its first frame). It runs on the
	// real-time timing thread, so it must not block, and the slice is reused:
	// copy it to keep it.
	LinkRates func(mbps []float64)
	meter     rateMeter // LinkRates' per-station totals at the previous sample

	// Airtime, when set, is called at every medium sample (every
	// MediumInterval of emulated time) with each station's airtime
	// counters (airtimeOf the sample). It runs on the real-time timing thread, so it
	// must not block; the slice is the callee's.
	Airtime func(c []airtime.Counters)

	nb *neighbour // another network on the channel (Config.Neighbour; nil = none)
}

// QueueSample is one apqueue.csv row.
type QueueSample struct {
	T          des.Time
	Frames     int
	Bytes      int
	DropsTotal uint64
}

// MediumSample is the medium's cumulative counters at T: the time it was
// busy and each node's airtime (its attempts' data and ACK or ACK timeout)
// and the airtime of the attempts addressed to it, stations first, then the
// AP. Differences of two samples make a row of medium.csv; a sample is also
// what the stations' airtime files are written from (airtimeOf).
type MediumSample struct {
	T         des.Time
	Busy      des.Time
	Airtime   []des.Time
	AirtimeIn []des.Time
	// Foreign is the air another network's attempts took (Config.Neighbour).
	Foreign des.Time
}

// MediumInterval is the period of the medium's samples (medium.csv): a
// tenth of a second, fine enough to see who had the air in a run's first
// seconds, coarse enough to keep an hour's run small.
const MediumInterval = 100 * des.Millisecond

// NewEngine builds the BSS from a normalised config. staPorts[i] receives the
// frames for station i, srv those for the server.
func NewEngine(cfg Config, sim *des.Sim, staPorts []Port, srv Port) (*Engine, error) {
	if err := cfg.Normalize(); err != nil {
		return nil, err
	}
	if len(staPorts) != len(cfg.Stations) {
		return nil, fmt.Errorf("engine: %d station ports for %d stations", len(staPorts), len(cfg.Stations))
	}
	p, err := cfg.Preset()
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x656d75))
	e := &Engine{Cfg: cfg, PHY: p, Sim: sim, staPorts: staPorts, srvPort: srv, macs: map[[6]byte]int{}}
	e.Med = dcf.NewMedium(sim, p, rng)
	e.Med.Deliver = e.deliver
	acc := dcf.DefaultAccess(p)
	apAcc := acc
	var apQ dcf.Queue = dcf.NewFIFO(cfg.AP.QueueFrames)
	switch cfg.AP.Queue {
	case "rr":
		apQ = dcf.NewRoundRobin(cfg.AP.QueueFrames)
	case "priority":
		apAcc.AIFSN, apAcc.CWMin, apAcc.CWMax = cfg.AP.AIFSN, cfg.AP.CWMin, cfg.AP.CWMax
	}
	e.AP = &dcf.Node{Name: "ap", IsAP: true, Associated: true, Access: apAcc, Q: apQ}
	e.Med.AddNode(e.AP)
	e.AssocDrops = make([]uint64, len(cfg.Stations))
	for i, s := range cfg.Stations {
		per, err := s.PERTable(p)
		if err != nil {
			return nil, err
		}
		n := &dcf.Node{Name: s.Name, RateMbps: s.RateMbps, FER: s.FER, PER: per, Associated: true, Access: acc, Q: dcf.NewFIFO(s.QueueFrames)}
		if kind := s.RateControl; kind != "" && kind != ratectl.KindConstant {
			ctl, err := dcf.NewController(kind, p, acc, s.RateMbps, cfg.Seed^uint64(i+1)<<40)
			if err != nil {
				return nil, fmt.Errorf("station %s: %w", s.Name, err)
			}
			n.Ctl = func(int) ratectl.Controller { return ctl }
		}
		e.Med.AddNode(n)
		e.Stas = append(e.Stas, n)
		mac, _ := net.ParseMAC(s.MAC)
		e.macs[[6]byte(mac)] = i
		e.extra = append(e.extra, des.Time(s.ExtraDelayMs*float64(des.Millisecond)))
		e.rates = append(e.rates, s.RateMbps)
		if s.Mobility != "" {
			tr, err := LoadTrace(s.Mobility)
			if err != nil {
				return nil, fmt.Errorf("station %s: %w", s.Name, err)
			}
			e.schedTrace(i, tr)
		}
	}
	e.nb = e.addNeighbour()
	if kind := cfg.AP.RateControl; kind != "" && kind != ratectl.KindConstant {
		mk := func(to int) (ratectl.Controller, error) {
			return dcf.NewController(kind, p, apAcc, e.Med.Nodes[to].RateMbps, cfg.Seed^uint64(to)<<48^0x4150)
		}
		for _, n := range e.Stas { // find configuration errors now
			if _, err := mk(n.ID); err != nil {
				return nil, fmt.Errorf("ap: %w", err)
			}
		}
		e.AP.Ctl = dcf.PerReceiver(func(to int) ratectl.Controller {
			if to < 1 || to >= len(e.Med.Nodes) {
				return nil
			}
			c, _ := mk(to)
			return c
		})
	}
	e.Up = wire.New(sim, cfg.Wire.Up, rand.New(rand.NewPCG(cfg.Seed, 0x7570)), func(b []byte, _ int) {
		e.UpBytes += uint64(len(b))
		e.write(e.srvPort, b)
	})
	e.Down = wire.New(sim, cfg.Wire.Down, rand.New(rand.NewPCG(cfg.Seed, 0x646f776e)), func(b []byte, tag int) {
		if tag < 0 {
			e.apEnqueue(&dcf.Frame{MSDU: len(b) - EthernetHeader, To: dcf.Broadcast, Data: b, Origin: serverOrigin})
		} else {
			e.apEnqueue(&dcf.Frame{MSDU: len(b) - EthernetHeader, To: e.Stas[tag].ID, Data: b, Origin: serverOrigin})
		}
	})
	e.sample()
	return e, nil
}

func (e *Engine) schedTrace(i int, tr []TracePoint) {
	n := e.Stas[i]
	for _, p := range tr {
		p := p
		e.Sim.At(des.Time(p.T*float64(des.Second)), func() {
			n.RateMbps = e.rates[i]
			if p.RateMbps > 0 {
				n.RateMbps = p.RateMbps
			}
			n.FER = p.FER
			gone := e.Med.SetAssociated(n, p.Associated)
			e.AssocDrops[i] += uint64(len(gone))
		})
	}
}

func (e *Engine) sample() {
	now := e.Sim.Now()
	e.Samples = append(e.Samples, QueueSample{T: now, Frames: e.AP.Backlog(), Bytes: e.AP.BacklogBytes(), DropsTotal: e.AP.Stats.Dropped()})
	if k := len(e.Medium); k == 0 || now-e.Medium[k-1].T >= MediumInterval {
		m := e.mediumSample(now)
		e.Medium = append(e.Medium, m)
		if e.Airtime != nil {
			e.Airtime(airtimeOf(m, len(e.Stas), e.Cfg.AirtimeBSSRx))
		}
	}
	if e.LinkRates != nil {
		e.LinkRates(e.meter.updateNodes(e.Stas))
	}
	e.Sim.After(des.Time(e.Cfg.SampleIntervalMs*float64(des.Millisecond)), e.sample)
}

// mediumSample takes the medium's counters at now (MediumSample).
func (e *Engine) mediumSample(now des.Time) MediumSample {
	nodes := e.stationsThenAP()
	m := MediumSample{T: now, Busy: e.Med.BusyTime, Airtime: make([]des.Time, len(nodes)), AirtimeIn: make([]des.Time, len(nodes)), Foreign: e.nb.airtime()}
	for i, n := range nodes {
		m.Airtime[i], m.AirtimeIn[i] = n.Stats.Airtime, n.Stats.AirtimeIn
	}
	return m
}

// stationsThenAP is the nodes in the order of the emulator's per-node
// files (rates.csv, medium.csv): the stations, then the AP.
func (e *Engine) stationsThenAP() []*dcf.Node {
	return append(append(make([]*dcf.Node, 0, len(e.Stas)+1), e.Stas...), e.AP)
}

// startRate is station i's PHY rate (Mbit/s) before its first frame: its
// constant rate, or with rate control the top of the PHY's rate set (ARF,
// AARF and Minstrel start there); 0 with a mobility trace, which sets it.
func (e *Engine) startRate(i int) float64 {
	switch {
	case e.Cfg.Stations[i].Mobility != "":
		return 0
	case e.Stas[i].Ctl != nil && len(e.PHY.Rates) > 0:
		return e.PHY.Rates[len(e.PHY.Rates)-1]
	case e.Stas[i].RateMbps > 0:
		return e.Stas[i].RateMbps
	}
	return e.PHY.DataRateMbps
}

func (e *Engine) write(p Port, b []byte) {
	if p == nil {
		return
	}
	if err := p.WriteFrame(b); err != nil {
		e.WriteErrors++
	}
}

// FromStation takes an Ethernet frame sent by station i, at Sim.Now.
func (e *Engine) FromStation(i int, b []byte) {
	if len(b) < EthernetHeader || i < 0 || i >= len(e.Stas) {
		return
	}
	e.macs[[6]byte(b[6:12])] = i // MAC learning
	n := e.Stas[i]
	if !n.Associated {
		e.AssocDrops[i]++
		return
	}
	e.Med.Enqueue(n, &dcf.Frame{MSDU: len(b) - EthernetHeader, To: e.AP.ID, Data: b, Origin: i})
}

// FromServer takes an Ethernet frame sent by the server, at Sim.Now.
func (e *Engine) FromServer(b []byte) {
	if len(b) < EthernetHeader {
		return
	}
	if b[0]&1 == 1 {
		e.Down.Send(b, -1, 0)
		return
	}
	j, ok := e.macs[[6]byte(b[0:6])]
	if !ok {
		e.UnknownDrops++
		return
	}
	e.Down.Send(b, j, e.extra[j])
}

func (e *Engine) apEnqueue(f *dcf.Frame) {
	if f.To != dcf.Broadcast {
		if n := e.Med.Nodes[f.To]; !n.Associated {
			e.AssocDrops[f.To-1]++
			return
		}
	}
	e.Med.Enqueue(e.AP, f)
}

// deliver routes a frame received over the air.
func (e *Engine) deliver(from *dcf.Node, f *dcf.Frame, to *dcf.Node) {
	if e.nb.takes(to, f) {
		return
	}
	if to == e.AP { // uplink: the AP bridges
		dst := f.Data
		if len(dst) < EthernetHeader {
			return
		}
		if dst[0]&1 == 1 { // group-addressed: rebroadcast in the BSS and forward to the wire
			e.apEnqueue(&dcf.Frame{MSDU: f.MSDU, To: dcf.Broadcast, Data: f.Data, Origin: f.Origin})
			e.Up.Send(f.Data, f.Origin, e.extra[f.Origin])
			return
		}
		if j, ok := e.macs[[6]byte(dst[0:6])]; ok {
			if j != f.Origin {
				e.apEnqueue(&dcf.Frame{MSDU: f.MSDU, To: e.Stas[j].ID, Data: f.Data, Origin: f.Origin})
			}
			return
		}
		e.Up.Send(f.Data, f.Origin, e.extra[f.Origin])
		return
	}
	i := to.ID - 1
	if i < 0 || (f.To == dcf.Broadcast && f.Origin == i) { // a station ignores its own broadcast
		return
	}
	e.DownBytes += uint64(len(f.Data))
	e.write(e.staPorts[i], f.Data)
}

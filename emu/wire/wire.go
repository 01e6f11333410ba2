// Package wire is a Dummynet-style wired pipe on a des.Sim: a drop-tail
// queue feeding a link of fixed rate, then a fixed propagation delay (plus a
// per-frame extra delay, e.g. per terminal), with independent random loss.
package wire

import (
	"fmt"
	"math/rand/v2"

	"github.com/coopcc/coopcc/emu/des"
)

// Config is one direction of the wired path.
type Config struct {
	RateMbps    float64 `toml:"rate_mbps"`    // link rate; 0 = no serialisation limit
	DelayMs     float64 `toml:"delay_ms"`     // one-way propagation delay
	QueueFrames int     `toml:"queue_frames"` // drop-tail queue in front of the link; 0 = 1000
	Loss        float64 `toml:"loss"`         // independent random loss probability, 0..1
}

// Validate checks the ranges.
func (c Config) Validate() error {
	switch {
	case c.RateMbps < 0:
		return fmt.Errorf("rate_mbps must be >= 0 (0 = unlimited), got %g", c.RateMbps)
	case c.DelayMs < 0:
		return fmt.Errorf("delay_ms must be >= 0, got %g", c.DelayMs)
	case c.QueueFrames < 0:
		return fmt.Errorf("queue_frames must be >= 0, got %d", c.QueueFrames)
	case c.Loss < 0 || c.Loss > 1:
		return fmt.Errorf("loss must be within 0..1, got %g", c.Loss)
	}
	return nil
}

// Stats are the pipe's counters.
type Stats struct {
	Frames, Bytes uint64 // delivered
	QueueDrops    uint64
	LossDrops     uint64
}

type packet struct {
	data  []byte
	tag   int
	extra des.Time
}

// Pipe is one direction of the wire. Out is called when a frame leaves it.
type Pipe struct {
	sim   *des.Sim
	cfg   Config
	rng   *rand.Rand
	Out   func(data []byte, tag int)
	q     []packet
	busy  bool
	Stats Stats
}

// New returns an idle pipe.
func New(sim *des.Sim, cfg Config, rng *rand.Rand, out func([]byte, int)) *Pipe {
	if cfg.QueueFrames == 0 {
		cfg.QueueFrames = 1000
	}
	return &Pipe{sim: sim, cfg: cfg, rng: rng, Out: out}
}

// Len is the number of frames waiting for the link (not those in flight).
func (p *Pipe) Len() int { return len(p.q) }

// Send offers a frame; tag is handed back to Out; extra is added to the
// propagation delay of this frame.
func (p *Pipe) Send(data []byte, tag int, extra des.Time) {
	if p.cfg.Loss > 0 && p.rng.Float64() < p.cfg.Loss {
		p.Stats.LossDrops++
		return
	}
	if len(p.q) >= p.cfg.QueueFrames {
		p.Stats.QueueDrops++
		return
	}
	p.q = append(p.q, packet{data, tag, extra})
	if !p.busy {
		p.next()
	}
}

func (p *Pipe) next() {
	if len(p.q) == 0 {
		p.busy = false
		return
	}
	pk := p.q[0]
	copy(p.q, p.q[1:])
	p.q[len(p.q)-1] = packet{}
	p.q = p.q[:len(p.q)-1]
	var tx des.Time
	if p.cfg.RateMbps > 0 {
		tx = des.Time(float64(8*len(pk.data)) / p.cfg.RateMbps * 1000)
	}
	p.busy = true
	delay := des.Time(p.cfg.DelayMs*float64(des.Millisecond)) + pk.extra
	p.sim.After(tx, func() {
		if delay > 0 {
			p.sim.After(delay, func() { p.deliver(pk) })
		} else {
			p.deliver(pk)
		}
		p.next()
	})
}

func (p *Pipe) deliver(pk packet) {
	p.Stats.Frames++
	p.Stats.Bytes += uint64(len(pk.data))
	if p.Out != nil {
		p.Out(pk.data, pk.tag)
	}
}

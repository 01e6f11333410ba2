package emu

import (
	"fmt"
	"math/rand/v2"
	"net"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"github.com/coopcc/coopcc/emu/des"
)

// BenchOptions drives the real-time engine with synthetic frames (no TAPs).
type BenchOptions struct {
	PHY      string
	Stations int
	PPS      float64 // offered frames per second in total, half uplink, half downlink
	Frame    int     // Ethernet frame bytes
	Duration time.Duration
	Priority int  // SCHED_FIFO priority of the loop (0 = ordinary)
	Virtual  bool // run in virtual time as fast as possible (measures the handlers' cost only)
	Seed     uint64
	// TAP runs the engine between real TAP devices in a scratch namespace
	// (root): frames injected through AF_PACKET, delivered to a UDP socket.
	TAP         bool
	Inline      bool    // TAP only: the inline engine (writes on the timing thread)
	Writers     int     // TAP only: writer threads of the threaded engine (0 = one per CPU but one)
	ThreadReads bool    // TAP only: the threaded engine's writer threads also read the TAPs
	SpinDuty    float64 // TAP only: busy-wait budget override (EngineOptions.SpinDuty)
}

// BenchResult is one benchmark point.
type BenchResult struct {
	Opts                  BenchOptions
	OfferedPPS, Delivered float64 // frames per second
	EventsPerSec          float64
	P50, P99, MaxUs       float64
	Valid                 bool // p99 < 100 µs
	RTErr                 string
	CPU                   float64       // process CPU time / wall time (1 = one core)
	Spin                  time.Duration // adaptive spin at the end
	NsPerEvent            float64       // virtual mode: handler cost per event
	// TAP mode: delivery lateness of the TAP writes, CPU (cores) of the
	// loop thread, of the writer threads and of the injecting and sinking
	// helpers (not in CPU), and the emulator's report.
	DeliveryP99                   float64
	LoopCPU, WriterCPU, HelperCPU float64
	Report                        *Report
	// TAP mode: share of wall time the loop spent handling, writing (or
	// waking writers), sleeping, spinning and reading; µs per TAP read and
	// per inline TAP write on the loop thread.
	Phase           [6]float64
	ReadUs, WriteUs float64
}

type countPort struct{ n *uint64 }

func (c countPort) WriteFrame([]byte) error { *c.n++; return nil }

// Bench runs the real-time engine for o.Duration with Poisson arrivals: each
// station sends frames to the server and the server to each station.
func Bench(o BenchOptions) (BenchResult, error) {
	if o.Stations < 1 || o.PPS <= 0 || o.Frame < 60 || o.Duration <= 0 {
		return BenchResult{}, fmt.Errorf("bench: need stations >= 1, pps > 0, frame >= 60 B, duration > 0")
	}
	if o.TAP {
		if o.Frame < 42 || o.Frame > 1514 {
			return BenchResult{}, fmt.Errorf("bench --tap: frame must be 60..1514 B")
		}
		return tapBench(o)
	}
	cfg := Config{PHY: o.PHY, Seed: o.Seed, RTPriority: -1, Server: Endpoint{}}
	for i := 0; i < o.Stations; i++ {
		cfg.Stations = append(cfg.Stations, Station{})
	}
	if err := cfg.Normalize(); err != nil {
		return BenchResult{}, err
	}
	var delivered uint64
	ports := make([]Port, o.Stations)
	for i := range ports {
		ports[i] = countPort{&delivered}
	}
	sim := des.New()
	e, err := NewEngine(cfg, sim, ports, countPort{&delivered})
	if err != nil {
		return BenchResult{}, err
	}
	srvMAC, _ := net.ParseMAC(cfg.Server.MAC)
	frames := make([][]byte, o.Stations)     // uplink, per station
	downFrames := make([][]byte, o.Stations) // downlink, per station
	for i, s := range cfg.Stations {
		mac, _ := net.ParseMAC(s.MAC)
		up := make([]byte, o.Frame)
		copy(up[0:6], srvMAC)
		copy(up[6:12], mac)
		frames[i] = up
		down := make([]byte, o.Frame)
		copy(down[0:6], mac)
		copy(down[6:12], srvMAC)
		downFrames[i] = down
	}
	rng := rand.New(rand.NewPCG(o.Seed, 99))
	mean := float64(des.Second) / o.PPS
	var offered uint64
	var gen func()
	gen = func() {
		offered++
		i := rng.IntN(o.Stations)
		if rng.IntN(2) == 0 {
			e.FromStation(i, frames[i])
		} else {
			e.FromServer(downFrames[i])
		}
		sim.After(des.Time(rng.ExpFloat64()*mean)+1, gen)
	}
	sim.At(0, gen)
	if o.Virtual {
		start := time.Now()
		sim.RunUntil(des.Time(o.Duration))
		wall := time.Since(start)
		secs := o.Duration.Seconds()
		return BenchResult{Opts: o, OfferedPPS: float64(offered) / secs, Delivered: float64(delivered) / secs,
			EventsPerSec: float64(sim.Events()) / secs, CPU: wall.Seconds() / secs,
			NsPerEvent: float64(wall.Nanoseconds()) / float64(sim.Events()), Valid: true}, nil
	}
	rt, err := NewRealTime(sim, nil)
	if err != nil {
		return BenchResult{}, err
	}
	defer rt.Close()
	rt.Priority = o.Priority
	end := des.Time(o.Duration)
	var ru0, ru1 unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru0)
	if err := rt.Run(end); err != nil {
		return BenchResult{}, err
	}
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	secs := o.Duration.Seconds()
	r := BenchResult{Opts: o, OfferedPPS: float64(offered) / secs, Delivered: float64(delivered) / secs,
		EventsPerSec: float64(sim.Events()) / secs, P50: rt.Hist.Quantile(0.5), P99: rt.Hist.Quantile(0.99),
		MaxUs: float64(rt.Hist.Max()) / 1000, RTErr: rt.RTErr, CPU: cpu.Seconds() / secs, Spin: rt.SpinNow}
	r.Valid = r.P99 < 100
	return r, nil
}

// Sustained is the highest delivered frame rate of a rate sweep that passes
// ok with every lower requested rate passing too (a sweep's "sustained" rate:
// one failing point ends it, however the later points fare), or 0 when the
// lowest rate fails. rs may come in any order; ties keep the first.
func Sustained(rs []BenchResult, ok func(BenchResult) bool) float64 {
	sorted := append([]BenchResult(nil), rs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Opts.PPS < sorted[j].Opts.PPS })
	best := 0.0
	for _, r := range sorted {
		if !ok(r) {
			break
		}
		best = max(best, r.Delivered)
	}
	return best
}

// Under returns a Sustained predicate: p99 scheduling lateness under us µs.
func Under(us float64) func(BenchResult) bool {
	return func(r BenchResult) bool { return r.P99 < us }
}

// EmulatorValid is the Sustained predicate of a lab run's verdict: the
// emulator's report judged the point valid (p99 under its threshold, no
// frame lost to the emulator's own overload, TAP delivery in time).
func EmulatorValid(r BenchResult) bool { return r.Report != nil && r.Report.Valid }

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
	l, err := newBenchLoad(o)
	if err != nil {
		return BenchResult{}, err
	}
	if o.Virtual {
		return l.runVirtual(o), nil
	}
	return l.runRealTime(o)
}

// benchLoad is the synthetic workload of Bench: an engine whose ports count
// the frames they are given, fed with Poisson arrivals of frames between the
// server and random stations.
type benchLoad struct {
	sim                *des.Sim
	offered, delivered uint64 // frames
}

// newBenchLoad builds the engine of o and schedules the first arrival at
// time 0; each arrival schedules the next.
func newBenchLoad(o BenchOptions) (*benchLoad, error) {
	cfg, err := benchConfig(o)
	if err != nil {
		return nil, err
	}
	l := &benchLoad{sim: des.New()}
	ports := make([]Port, o.Stations)
	for i := range ports {
		ports[i] = countPort{&l.delivered}
	}
	e, err := NewEngine(cfg, l.sim, ports, countPort{&l.delivered})
	if err != nil {
		return nil, err
	}
	up, down := benchFrames(cfg, o.Frame)
	rng := rand.New(rand.NewPCG(o.Seed, 99))
	mean := float64(des.Second) / o.PPS
	var arrive func()
	arrive = func() {
		l.offered++
		i := rng.IntN(o.Stations)
		if rng.IntN(2) == 0 {
			e.FromStation(i, up[i])
		} else {
			e.FromServer(down[i])
		}
		l.sim.After(des.Time(rng.ExpFloat64()*mean)+1, arrive)
	}
	l.sim.At(0, arrive)
	return l, nil
}

// benchConfig is the emulator configuration of o: o.Stations stations and
// the server with default addresses, and no SCHED_FIFO of the engine's own
// (Bench sets the loop's priority itself).
func benchConfig(o BenchOptions) (Config, error) {
	cfg := Config{PHY: o.PHY, Seed: o.Seed, RTPriority: -1, Server: Endpoint{}}
	for range o.Stations {
		cfg.Stations = append(cfg.Stations, Station{})
	}
	if err := cfg.Normalize(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// benchFrames returns per station of cfg an uplink frame (station to
// server) and a downlink frame (server to station) of size bytes: the two
// MAC addresses, then zeros.
func benchFrames(cfg Config, size int) (up, down [][]byte) {
	srvMAC, _ := net.ParseMAC(cfg.Server.MAC)
	up = make([][]byte, len(cfg.Stations))
	down = make([][]byte, len(cfg.Stations))
	for i, s := range cfg.Stations {
		mac, _ := net.ParseMAC(s.MAC)
		up[i] = make([]byte, size)
		copy(up[i][0:6], srvMAC)
		copy(up[i][6:12], mac)
		down[i] = make([]byte, size)
		copy(down[i][0:6], mac)
		copy(down[i][6:12], srvMAC)
	}
	return up, down
}

// runVirtual runs l in virtual time as fast as possible until o.Duration
// and reports the handlers' cost: CPU is wall time per simulated second.
func (l *benchLoad) runVirtual(o BenchOptions) BenchResult {
	start := time.Now()
	l.sim.RunUntil(des.Time(o.Duration))
	wall := time.Since(start)
	r := l.result(o)
	r.CPU = wall.Seconds() / o.Duration.Seconds()
	r.NsPerEvent = float64(wall.Nanoseconds()) / float64(l.sim.Events())
	r.Valid = true
	return r
}

// runRealTime runs l on the real-time loop for o.Duration and reports the
// loop's scheduling lateness and the process's CPU time.
func (l *benchLoad) runRealTime(o BenchOptions) (BenchResult, error) {
	rt, err := NewRealTime(l.sim, nil)
	if err != nil {
		return BenchResult{}, err
	}
	defer rt.Close()
	rt.Priority = o.Priority
	cpu, err := processCPU(func() error { return rt.Run(des.Time(o.Duration)) })
	if err != nil {
		return BenchResult{}, err
	}
	r := l.result(o)
	r.P50, r.P99 = rt.Hist.Quantile(0.5), rt.Hist.Quantile(0.99)
	r.MaxUs = float64(rt.Hist.Max()) / 1000
	r.RTErr, r.Spin = rt.RTErr, rt.SpinNow
	r.CPU = cpu.Seconds() / o.Duration.Seconds()
	r.Valid = r.P99 < 100
	return r, nil
}

// result is the part of l's result that both modes share: o and the
// offered, delivered and event rates per second of o.Duration.
func (l *benchLoad) result(o BenchOptions) BenchResult {
	secs := o.Duration.Seconds()
	return BenchResult{Opts: o, OfferedPPS: float64(l.offered) / secs, Delivered: float64(l.delivered) / secs,
		EventsPerSec: float64(l.sim.Events()) / secs}
}

// processCPU runs run and returns the CPU time, user and system, that the
// whole process spent meanwhile.
func processCPU(run func() error) (time.Duration, error) {
	var ru0, ru1 unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru0)
	if err := run(); err != nil {
		return 0, err
	}
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru1)
	return time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()), nil
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

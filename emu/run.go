package emu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/coopcc/coopcc/emu/des"
	"github.com/coopcc/coopcc/internal/linkspeed"
)

// EngineOptions choose the real-time engine's architecture.
type EngineOptions struct {
	// Inline selects the old engine: TAP writes on the timing thread, between
	// events. The default (false) is the threaded engine: the timing thread
	// only schedules and reads; writer threads do the TAP writes.
	Inline bool
	// Writers is the number of writer threads (0 = one per CPU but one, at most one
	// per TAP).
	Writers int
	// ThreadReads: with the threaded engine, the writer threads also read
	// the TAPs and hand the frames to the timing thread through lock-free
	// queues (measured slower on 2 cores than the loop reading them itself:
	// docs/performance.md).
	ThreadReads bool
	// SpinDuty overrides the timing thread's busy-wait budget (0 = default
	// 0.8 for the threaded engine, 1 = none, as the inline engine).
	SpinDuty float64
}

// Run creates the TAPs the config names, prints "ready" to ready, forwards
// frames in real time until ctx is cancelled, removes the TAPs and writes
// the statistics into outDir. The report is returned too.
//
// With cfg.RTPriority > 0 every thread of the calling process runs
// SCHED_FIFO while Run runs, and threads and children it creates inherit
// that: run it in a process of its own (`coopcc emu run`), not inside one
// that starts other programs meanwhile.
func Run(ctx context.Context, cfg Config, outDir string, ready io.Writer) (Report, error) {
	return RunWith(ctx, cfg, EngineOptions{Inline: cfg.Engine == "inline"}, outDir, ready)
}

// RunWith is Run with a choice of engine.
func RunWith(ctx context.Context, cfg Config, o EngineOptions, outDir string, ready io.Writer) (Report, error) {
	if err := cfg.Normalize(); err != nil {
		return Report{}, err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil { // fail before the run, not after it
		return Report{}, fmt.Errorf("output directory: %w", err)
	}
	te, err := openTapEngine(cfg, o)
	if err != nil {
		return Report{}, err
	}
	defer te.close()
	if _, err := fmt.Fprintln(ready, "ready"); err != nil {
		return Report{}, fmt.Errorf("print ready: %w", err)
	}
	runErr := te.run(ctx, 0)
	rep := te.report()
	if runErr != nil {
		rep.Valid, rep.Reason = false, runErr.Error()
	}
	if err := WriteStats(outDir, te.e, rep); err != nil {
		return rep, errors.Join(runErr, err)
	}
	return rep, runErr
}

// tapEngine is the emulator wired to its TAP devices: the engine, the
// real-time loop and (threaded engine) the writer threads.
type tapEngine struct {
	cfg   Config
	sta   []*TAP
	srv   *TAP
	sim   *des.Sim
	rt    *RealTime
	e     *Engine
	w     *Writers // nil for the inline engine
	base  uint64   // the TAPs' tx_dropped before the run
	ring  uint64   // tx_dropped grown during the run (noted when the stop was asked)
	cpu0  cpuPressure
	psi   float64 // share of the run some task waited for a CPU (PSI), -1 unknown
	stat0 cpuStat
	steal float64 // share of the CPU time the hypervisor took, -1 unknown
	dur   des.Time
	werr  error               // writer threads' setup error (SCHED_FIFO refused)
	ws    *WriterStats        // threaded engine: the writers' final counters
	nw    int                 // writer threads (0 = inline engine)
	lsh   []*linkspeed.Handle // per station: link speed handle in its namespace
	spd   *speedSetter        // sets the station TAPs' link speeds (nil until started)
	air   *airtimeWriter      // writes the stations' airtime files (nil without Config.AirtimeDir)
}

// openTapEngine creates the TAPs and the engine on top of them.
func openTapEngine(cfg Config, o EngineOptions) (*tapEngine, error) {
	te := &tapEngine{cfg: cfg, sim: des.New(), psi: -1, steal: -1}
	if err := te.openTAPs(); err != nil {
		te.close()
		return nil, err
	}
	rt, err := NewRealTime(te.sim, nil)
	if err != nil {
		te.close()
		return nil, err
	}
	te.rt = rt
	rt.Priority = max(cfg.RTPriority, 0)
	rt.MaxSpin = time.Duration(cfg.SpinMaxUs * float64(time.Microsecond))
	if rt.MaxSpin < rt.Spin {
		rt.Spin = rt.MaxSpin
	}
	port := func(t *TAP) Port { return DeferredPort{RT: rt, FD: t.FD} }
	if o.Inline {
		rt.SpinDuty = 1 // the previous engine, unchanged: no busy-wait budget
	}
	if o.SpinDuty > 0 {
		rt.SpinDuty = o.SpinDuty
	}
	if !o.Inline {
		n := o.Writers
		if n <= 0 {
			n = max(runtime.NumCPU()-1, 1) // leave a core to the senders
		}
		n = min(n, len(te.sta)+1)
		if te.w, err = NewWriters(n); err != nil {
			te.close()
			return nil, err
		}
		rt.Writers = te.w
		te.w.Reads = o.ThreadReads
		te.nw = n
		port = func(t *TAP) Port { return te.w.Port(t.FD, te.sim) }
	}
	ports := make([]Port, len(te.sta))
	for i, t := range te.sta {
		ports[i] = port(t)
	}
	if te.e, err = NewEngine(cfg, te.sim, ports, port(te.srv)); err != nil {
		te.close()
		return nil, err
	}
	for i, t := range te.sta {
		i := i
		rt.Sources = append(rt.Sources, Source{FD: t.FD, Handle: func(b []byte) { te.e.FromStation(i, b) }})
	}
	rt.Sources = append(rt.Sources, Source{FD: te.srv.FD, Handle: te.e.FromServer})
	if err := te.startLinkSpeeds(); err != nil {
		te.close()
		return nil, err
	}
	if err := te.startAirtime(); err != nil {
		te.close()
		return nil, err
	}
	return te, nil
}

// startLinkSpeeds makes each station TAP's link speed follow the station's
// PHY rate: it opens a handle in each station's namespace, sets the speed of
// the stations whose rate is fixed, and hooks the engine's rate samples to
// the setter's goroutine.
func (te *tapEngine) startLinkSpeeds() error {
	if len(te.sta) == 0 {
		return nil
	}
	hs, err := openLinkSpeeds(te.cfg)
	if err != nil {
		return err
	}
	te.lsh = hs
	set := func(i int, mbps uint32) error {
		if err := te.lsh[i].Set(te.sta[i].Name, mbps); err != nil {
			return fmt.Errorf("station %s: %w", te.cfg.Stations[i].Name, err)
		}
		return nil
	}
	te.spd = newSpeedSetter(len(te.sta), set, os.Stderr)
	for i := range te.sta {
		te.spd.setOne(i, te.e.startRate(i))
	}
	te.spd.start()
	te.e.LinkRates = te.spd.offer
	return nil
}

// startAirtime starts the writer of the stations' airtime files when the
// config names a directory for them, and hooks it to the engine's medium
// samples.
func (te *tapEngine) startAirtime() error {
	if te.cfg.AirtimeDir == "" {
		return nil
	}
	w, err := newAirtimeWriter(te.cfg.AirtimeDir, te.cfg.Stations, os.Stderr)
	if err != nil {
		return err
	}
	te.air = w
	w.feed.start(w.write)
	te.e.Airtime = w.feed.offer
	return nil
}

// minTAPRing is the smallest TAP ring (txqueuelen) the emulator sets.
const minTAPRing = 1000

// openTAPs creates one TAP per station and one for the server.
func (te *tapEngine) openTAPs() error {
	open := func(ep Endpoint, qlen int) (*TAP, error) {
		mac, err := net.ParseMAC(ep.MAC)
		if err != nil {
			return nil, err
		}
		return OpenTAP(ep.Netns, ep.Iface, mac, qlen)
	}
	for _, s := range te.cfg.Stations {
		// The TAP's ring (txqueuelen) only carries frames to the emulator,
		// which reads it eagerly; the station queue of the model is its own.
		// A ring as small as a small model queue would overflow on one TSO
		// burst before the loop wakes, and count as the emulator's overload.
		t, err := open(s.Endpoint, max(s.QueueFrames, minTAPRing))
		if err != nil {
			return fmt.Errorf("station %s: %w", s.Name, err)
		}
		te.sta = append(te.sta, t)
	}
	t, err := open(te.cfg.Server, 1000)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	te.srv = t
	return nil
}

// taps lists every TAP (stations, then the server).
func (te *tapEngine) taps() []*TAP {
	all := append([]*TAP(nil), te.sta...)
	if te.srv != nil {
		all = append(all, te.srv)
	}
	return all
}

// txDropped sums the TAPs' tx_dropped counters.
func (te *tapEngine) txDropped() uint64 {
	var n uint64
	for _, t := range te.taps() {
		if d, err := t.TxDropped(); err == nil {
			n += d
		}
	}
	return n
}

// run drives the loop until ctx is cancelled (or until end > 0). The TAP
// counters are read when the stop is asked, while the loop still reads the
// TAPs: frames the namespaces send after that are not the emulator's overload.
func (te *tapEngine) run(ctx context.Context, end des.Time) error {
	// Frames the namespaces queued before the loop starts are stale setup
	// traffic and count against nobody: note the counters now.
	te.base = te.txDropped()
	te.cpu0, te.stat0 = readCPUPressure(), readCPUStat()
	noted := make(chan struct{})
	done := make(chan struct{})
	note := func() {
		d := te.txDropped()
		te.ring = d - min(d, te.base)
		te.psi = te.cpu0.share(readCPUPressure())
		te.steal = te.stat0.stealShare(readCPUStat())
		te.dur = te.rt.now()
	}
	te.rt.Start = time.Now() // before the goroutine that may read it (note)
	go func() {
		defer close(noted)
		select {
		case <-ctx.Done():
			note()
			te.rt.Stop()
		case <-done:
		}
	}()
	err := te.rt.Run(end)
	if te.spd != nil {
		te.spd.stop() // no more samples come: its counters are final
	}
	if te.air != nil {
		te.air.feed.stop()
	}
	close(done)
	<-noted
	if te.dur == 0 {
		note()
	}
	if te.w != nil {
		te.werr = te.w.Close()
		ws := te.w.Stats()
		te.ws = &ws
	}
	return err
}

// close removes the TAPs and releases the loop's and writers' resources.
func (te *tapEngine) close() {
	if te.spd != nil {
		te.spd.stop()
	}
	if te.air != nil {
		te.air.feed.stop()
	}
	closeLinkSpeeds(te.lsh)
	te.lsh = nil
	if te.w != nil {
		_ = te.w.Close()
	}
	if te.rt != nil {
		_ = te.rt.Close()
	}
	for _, t := range te.taps() {
		_ = t.Close()
	}
}

// report judges the run (after run).
func (te *tapEngine) report() Report {
	o := Overload{TAPRingDrops: te.ring, TAPWriteErrors: te.e.WriteErrors + te.rt.WriteErrors}
	down := te.rt.DownDrops
	delivery := &te.rt.WriteHist
	if te.ws != nil {
		o.TAPWriteErrors += te.ws.Errors
		o.WriterQueueDrops = te.ws.QueueDrops
		o.InputQueueDrops = te.ws.InputDrops
		down += te.ws.DownDrops
		delivery = &te.ws.Hist
	}
	rep := NewReport(te.e, &te.rt.Hist, o, te.dur)
	rep.DownDrops = down
	rep.Engine, rep.Writers = "threaded", te.nw
	if te.nw == 0 {
		rep.Engine = "inline"
	}
	rep.LateBy = map[string]uint64{"handling": te.rt.LateBy[0], "writing": te.rt.LateBy[1], "sleeping": te.rt.LateBy[2], "spinning": te.rt.LateBy[3], "reading": te.rt.LateBy[4], "budget_sleep": te.rt.LateBy[5]}
	rep.CPUPressure, rep.CPUSteal = te.psi, te.steal
	if h := &te.rt.ArrivalHist; h.Count() > 0 {
		rep.ArrivalUs = map[string]float64{"p50": h.Quantile(0.5), "p99": h.Quantile(0.99), "max": float64(h.Max()) / 1000}
	}
	rep.judgeDelivery(delivery)
	if te.spd != nil && te.spd.Errors > 0 {
		rep.LinkSpeedErrors, rep.LinkSpeedError = te.spd.Errors, te.spd.First.Error()
	}
	if te.air != nil && te.air.Errors > 0 {
		rep.AirtimeErrors, rep.AirtimeError = te.air.Errors, te.air.First.Error()
	}
	return rep
}

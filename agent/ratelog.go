package agent

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Limit caps how often one log message is written.
type Limit struct {
	// Burst records per Window are written as they come; the rest are
	// counted and summarised in one record when the window ends.
	Burst  int
	Window time.Duration
}

// Messages the agent's log limits (a flood of joins and leaves, a sybil
// of sender ids, status loss, or a flapping policy would otherwise write a
// line per event: 2,310 INFO lines in 518 s in issue 17).
const (
	MsgPeerJoin  = "peer join"
	MsgPeerLeave = "peer leave"
	MsgBounds    = "bounds"
)

// MsgDecision is every tick's decision, logged at debug level and not
// limited: whoever sets that level asks for every one.
const MsgDecision = "decision"

// MsgQueueProbe is what coop's queue probe did at a tick (a verdict, the
// learned value taken from the group's probe leader), at info level: at
// most about one per probe epoch (5 s at the default interval), not limited.
const MsgQueueProbe = "queue probe"

// DefaultLimits are the agent's: at most 5 joins, 5 leaves and 10 bound
// lines per 10 s, the rest summarised once per 10 s with their count.
func DefaultLimits() map[string]Limit {
	return map[string]Limit{
		MsgPeerJoin:  {Burst: 5, Window: 10 * time.Second},
		MsgPeerLeave: {Burst: 5, Window: 10 * time.Second},
		MsgBounds:    {Burst: 10, Window: 10 * time.Second},
	}
}

// LimitHandler is a slog.Handler that passes records through to next,
// except records whose message has a Limit: of those at most Burst per
// window are written, and when a window in which some were dropped ends,
// one record "<message> (summary)" says how many (suppressed) and how many
// there were in all (total) in that window. Summaries are written by a
// timer at the end of the window (or by Flush). Handlers derived with
// WithAttrs/WithGroup share the counters.
type LimitHandler struct {
	next  slog.Handler
	state *limitState
}

type limitState struct {
	limits map[string]Limit
	now    func() time.Time
	// after schedules f after d (time.AfterFunc; tests run it by hand).
	after func(d time.Duration, f func())

	mu      sync.Mutex
	windows map[string]*window
	flushTo slog.Handler // the root handler summaries are written to
}

// window is one message's current window.
type window struct {
	start      time.Time
	total      int // records seen in the window
	suppressed int
	level      slog.Level
	scheduled  bool
}

// NewLimitHandler wraps next with the limits.
func NewLimitHandler(next slog.Handler, limits map[string]Limit) *LimitHandler {
	return newLimitHandler(next, limits, time.Now, func(d time.Duration, f func()) { time.AfterFunc(d, f) })
}

func newLimitHandler(next slog.Handler, limits map[string]Limit, now func() time.Time, after func(time.Duration, func())) *LimitHandler {
	return &LimitHandler{next: next, state: &limitState{
		limits: limits, now: now, after: after, windows: map[string]*window{}, flushTo: next,
	}}
}

// Enabled reports whether next handles the level.
func (h *LimitHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// WithAttrs returns a handler with the attributes that shares the limits.
func (h *LimitHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &LimitHandler{next: h.next.WithAttrs(as), state: h.state}
}

// WithGroup returns a handler with the group that shares the limits.
func (h *LimitHandler) WithGroup(name string) slog.Handler {
	return &LimitHandler{next: h.next.WithGroup(name), state: h.state}
}

// Handle writes the record unless its message is over its limit.
func (h *LimitHandler) Handle(ctx context.Context, r slog.Record) error {
	lim, ok := h.state.limits[r.Message]
	if !ok || lim.Burst <= 0 {
		return h.next.Handle(ctx, r)
	}
	if !h.state.admit(r.Message, r.Level, lim) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// admit counts a record of msg and reports whether to write it.
func (s *limitState) admit(msg string, level slog.Level, lim Limit) bool {
	now := s.now()
	s.mu.Lock()
	w := s.windows[msg]
	if w != nil && now.Sub(w.start) >= lim.Window {
		s.summariseLocked(msg, w, lim)
		w = nil
	}
	if w == nil {
		w = &window{start: now}
		s.windows[msg] = w
	}
	w.total++
	if w.total <= lim.Burst {
		s.mu.Unlock()
		return true
	}
	w.suppressed++
	if level > w.level {
		w.level = level
	}
	if !w.scheduled {
		w.scheduled = true
		start := w.start
		s.mu.Unlock()
		s.after(lim.Window-now.Sub(start), func() { s.flushOne(msg, start) })
		return false
	}
	s.mu.Unlock()
	return false
}

// flushOne writes the summary of msg's window that began at start, if it
// is still the current one.
func (s *limitState) flushOne(msg string, start time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.windows[msg]; w != nil && w.start.Equal(start) {
		s.summariseLocked(msg, w, s.limits[msg])
		delete(s.windows, msg)
	}
}

// summariseLocked writes one record for a window in which records were
// dropped.
func (s *limitState) summariseLocked(msg string, w *window, lim Limit) {
	if w.suppressed == 0 {
		return
	}
	level := w.level
	if level < slog.LevelInfo {
		level = slog.LevelInfo
	}
	r := slog.NewRecord(s.now(), level, msg+" (summary)", 0)
	r.AddAttrs(slog.Int("total", w.total), slog.Int("suppressed", w.suppressed),
		slog.Int("logged", w.total-w.suppressed), slog.Duration("window", lim.Window))
	_ = s.flushTo.Handle(context.Background(), r)
	w.suppressed = 0
}

// Flush writes the summaries of every window that has ended.
func (h *LimitHandler) Flush() {
	s := h.state
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for msg, w := range s.windows {
		lim := s.limits[msg]
		if now.Sub(w.start) >= lim.Window {
			s.summariseLocked(msg, w, lim)
			delete(s.windows, msg)
		}
	}
}

// boundLog decides which bound changes are worth a log line: the events
// file keeps every change, the log only meaningful ones — a bound that
// starts or ends, a change of more than 25 % since the last logged value,
// or a different N. lo 1 counts as no lower bound (a policy's lo flapping
// between 0 and 1 changes nothing TCP would notice).
type boundLog struct {
	last    map[string]loggedBound
	skipped map[string]int
}

type loggedBound struct {
	lo, hi uint32
	n      int
}

// minChange is the relative change of a bound that is logged.
const minChange = 0.25

func newBoundLog() *boundLog {
	return &boundLog{last: map[string]loggedBound{}, skipped: map[string]int{}}
}

// note records a change for dst and reports whether to log it, with the
// number of changes not logged since the last line.
func (l *boundLog) note(dst string, lo, hi uint32, n int) (log bool, skipped int) {
	cur := loggedBound{lo: effLo(lo), hi: hi, n: n}
	prev, seen := l.last[dst]
	if seen && !meaningful(prev, cur) {
		l.skipped[dst]++
		return false, 0
	}
	skipped = l.skipped[dst]
	l.last[dst] = cur
	delete(l.skipped, dst)
	return true, skipped
}

// effLo treats lo 1 as no lower bound.
func effLo(lo uint32) uint32 {
	if lo <= 1 {
		return 0
	}
	return lo
}

func meaningful(prev, cur loggedBound) bool {
	return prev.n != cur.n || changed(prev.hi, cur.hi) || changed(prev.lo, cur.lo)
}

// changed reports a bound that starts, ends or moves by more than
// minChange.
func changed(prev, cur uint32) bool {
	if prev == cur {
		return false
	}
	if prev == 0 || cur == 0 {
		return true
	}
	d := float64(cur) - float64(prev)
	if d < 0 {
		d = -d
	}
	return d > minChange*float64(prev)
}

// Package des is the discrete-event core of the WLAN emulator: a time-ordered
// event queue with cancellable events. Time is an int64 count of nanoseconds
// since the start of the simulation. The same queue is driven either in
// virtual time (Run: jump from event to event, deterministic) or by a
// real-time driver that waits for each event's wall-clock moment (package
// emu); handlers never know which.
package des

import "container/heap"

// Time is simulation time in nanoseconds since the start.
type Time = int64

// Common durations in simulation time units.
const (
	Nanosecond  Time = 1
	Microsecond Time = 1000
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// Event is a scheduled callback. Cancel it with Sim.Cancel.
type Event struct {
	at    Time
	seq   uint64
	fn    func()
	index int // position in the heap, -1 when not queued
}

// At returns the time the event is scheduled for.
func (e *Event) At() Time { return e.at }

// Pending reports whether the event is still queued.
func (e *Event) Pending() bool { return e != nil && e.index >= 0 }

// Sim is an event queue with a current time. It is not safe for concurrent
// use: one goroutine owns it.
type Sim struct {
	now    Time
	seq    uint64
	q      eventHeap
	events uint64
}

// New returns an empty simulation at time 0.
func New() *Sim { return &Sim{} }

// Now is the current simulation time: the time of the event being handled,
// or the time last set with Advance.
func (s *Sim) Now() Time { return s.now }

// Events is the number of events handled so far.
func (s *Sim) Events() uint64 { return s.events }

// Len is the number of queued events.
func (s *Sim) Len() int { return len(s.q) }

// At schedules fn at time t (clamped to Now: the past is not reachable).
// Events at the same time run in the order they were scheduled.
func (s *Sim) At(t Time, fn func()) *Event {
	if t < s.now {
		t = s.now
	}
	s.seq++
	e := &Event{at: t, seq: s.seq, fn: fn}
	heap.Push(&s.q, e)
	return e
}

// After schedules fn d nanoseconds from now.
func (s *Sim) After(d Time, fn func()) *Event { return s.At(s.now+d, fn) }

// Cancel removes a pending event; cancelling nil or a fired event is a no-op.
func (s *Sim) Cancel(e *Event) {
	if e == nil || e.index < 0 {
		return
	}
	heap.Remove(&s.q, e.index)
}

// Next returns the time of the earliest queued event and whether there is one.
func (s *Sim) Next() (Time, bool) {
	if len(s.q) == 0 {
		return 0, false
	}
	return s.q[0].at, true
}

// Step pops the earliest event, advances Now to its time and runs it. It
// returns false when the queue is empty.
func (s *Sim) Step() bool {
	if len(s.q) == 0 {
		return false
	}
	e := heap.Pop(&s.q).(*Event)
	s.now = e.at
	s.events++
	e.fn()
	return true
}

// Advance moves Now forward to t (used by a real-time driver when something
// happens between events, e.g. a frame arrives). It never moves time back.
func (s *Sim) Advance(t Time) {
	if t > s.now {
		s.now = t
	}
}

// RunUntil handles events in virtual time until the queue is empty or the
// next event is after end; Now is end afterwards (if it was earlier).
func (s *Sim) RunUntil(end Time) {
	for len(s.q) > 0 && s.q[0].at <= end {
		s.Step()
	}
	s.Advance(end)
}

type eventHeap []*Event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *eventHeap) Push(x any) {
	e := x.(*Event)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *eventHeap) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	e.index = -1
	*h = old[:n-1]
	return e
}

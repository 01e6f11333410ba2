package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"
)

// fakeTimers is a clock with AfterFunc timers run by advance.
type fakeTimers struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	f  func()
}

func (c *fakeTimers) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeTimers) After(d time.Duration, f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timers = append(c.timers, fakeTimer{c.now.Add(d), f})
}

// advance moves the clock by d, running the timers that fall due in order.
func (c *fakeTimers) advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for {
		sort.Slice(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
		if len(c.timers) == 0 || c.timers[0].at.After(end) {
			break
		}
		t := c.timers[0]
		c.timers = c.timers[1:]
		c.now = t.at
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.now = end
	c.mu.Unlock()
}

// logLines parses JSON log output into records.
func logLines(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func countMsg(lines []map[string]any, msg string) int {
	n := 0
	for _, l := range lines {
		if l["msg"] == msg {
			n++
		}
	}
	return n
}

func limitedLogger(buf *bytes.Buffer, c *fakeTimers) (*slog.Logger, *LimitHandler) {
	h := newLimitHandler(slog.NewJSONHandler(buf, nil), DefaultLimits(), c.Now, c.After)
	return slog.New(h), h
}

// A flood of 1,000 joins and 1,000 leaves in 10 s (a sybil, or 1,000
// sender ids flapping) writes 5 lines of each and one summary of each
// with the counts; the next window starts afresh.
func TestLimitHandlerSummarisesJoinLeaveFlood(t *testing.T) {
	var buf bytes.Buffer
	c := &fakeTimers{now: time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)}
	log, _ := limitedLogger(&buf, c)
	for i := 0; i < 1000; i++ {
		log.Info(MsgPeerJoin, "peer", i)
		log.Info(MsgPeerLeave, "peer", i)
		c.advance(9 * time.Millisecond) // 9 s in all: one window
	}
	log.Info("agent started") // not limited
	lines := logLines(t, &buf)
	if j, l := countMsg(lines, MsgPeerJoin), countMsg(lines, MsgPeerLeave); j != 5 || l != 5 {
		t.Fatalf("during the window: %d join and %d leave lines, want 5 each", j, l)
	}
	if countMsg(lines, MsgPeerJoin+" (summary)") != 0 || countMsg(lines, "agent started") != 1 {
		t.Fatalf("summary before the window ended, or an unlimited line dropped: %v", lines)
	}
	c.advance(1100 * time.Millisecond) // the window ends: the timers write the summaries
	lines = logLines(t, &buf)
	for _, msg := range []string{MsgPeerJoin, MsgPeerLeave} {
		var sum map[string]any
		for _, l := range lines {
			if l["msg"] == msg+" (summary)" {
				if sum != nil {
					t.Fatalf("two summaries of %s", msg)
				}
				sum = l
			}
		}
		if sum == nil || sum["total"] != 1000.0 || sum["suppressed"] != 995.0 || sum["logged"] != 5.0 {
			t.Fatalf("summary of %s: %v", msg, sum)
		}
	}
	// A new window: the first joins are written again.
	for i := 0; i < 7; i++ {
		log.Info(MsgPeerJoin, "peer", i)
	}
	c.advance(11 * time.Second)
	lines = logLines(t, &buf)
	if n := countMsg(lines, MsgPeerJoin); n != 10 {
		t.Fatalf("join lines after the second window: %d, want 5+5", n)
	}
	if n := countMsg(lines, MsgPeerJoin+" (summary)"); n != 2 {
		t.Fatalf("join summaries: %d, want 2", n)
	}
	// window 1: 5 joins, 5 leaves, 2 summaries, "agent started"; window 2:
	// 5 joins and a summary.
	if len(lines) != 5+5+2+1+5+1 {
		t.Fatalf("%d lines in all, want 19", len(lines))
	}
}

// A window without drops writes no summary, and Flush writes the pending
// summary of an ended window without a timer.
func TestLimitHandlerNoSummaryWithoutDropsAndFlush(t *testing.T) {
	var buf bytes.Buffer
	c := &fakeTimers{now: time.Unix(0, 0)}
	log, h := limitedLogger(&buf, c)
	for i := 0; i < 5; i++ {
		log.Info(MsgPeerJoin)
	}
	c.advance(20 * time.Second)
	if n := len(logLines(t, &buf)); n != 5 {
		t.Fatalf("%d lines, want the 5 joins only", n)
	}
	for i := 0; i < 6; i++ {
		log.Info(MsgPeerLeave)
	}
	c.timers = nil // the timer is lost: Flush still writes the summary
	c.advance(10 * time.Second)
	h.Flush()
	if n := countMsg(logLines(t, &buf), MsgPeerLeave+" (summary)"); n != 1 {
		t.Fatalf("%d leave summaries after Flush, want 1", n)
	}
}

// Bound changes are logged when a bound starts or ends, moves by more
// than 25 % since the last logged value, or N changes; lo flapping
// between 0 and 1 is never logged.
func TestBoundLogMeaningfulChanges(t *testing.T) {
	l := newBoundLog()
	steps := []struct {
		lo, hi uint32
		n      int
		want   bool
	}{
		{0, 20, 2, true},  // first
		{1, 20, 2, false}, // lo 0→1: nothing
		{0, 20, 2, false},
		{1, 20, 2, false},
		{0, 22, 2, false}, // +10 %
		{0, 24, 2, false}, // +20 % of the logged 20
		{0, 26, 2, true},  // +30 %
		{0, 26, 3, true},  // N changed
		{0, 21, 3, false}, // −19 %
		{0, 19, 3, true},  // −27 %
		{4, 19, 3, true},  // lo starts
		{5, 19, 3, false}, // +25 % exactly: not more than 25 %
		{0, 0, 3, true},   // control ends
	}
	logged, lastSkipped := 0, 0
	for i, s := range steps {
		ok, skipped := l.note("10.0.0.1", s.lo, s.hi, s.n)
		if ok != s.want {
			t.Fatalf("step %d %+v: logged %v, want %v", i, s, ok, s.want)
		}
		if ok {
			logged++
			lastSkipped = skipped
		}
	}
	if logged != 6 || lastSkipped != 1 {
		t.Fatalf("logged %d (want 6), last line reports %d unlogged changes (want 1)", logged, lastSkipped)
	}
}

// loFlap is a policy whose lo flaps between 0 and 1 every tick and whose
// hi creeps by one segment.
type loFlap struct{ i int }

func (p *loFlap) Name() string { return "flap" }
func (p *loFlap) Decide(View) Decision {
	p.i++
	return Decision{Active: true, Default: PBounds{Lo: uint32(p.i % 2), Hi: uint32(40 + p.i/10)}, Reason: "flap"}
}

// The agent writes every change to the events file but logs only the
// meaningful ones: 100 ticks of a flapping lo and a creeping hi give 100
// events and one log line.
func TestAgentLogsBoundChangesOnlyWhenMeaningful(t *testing.T) {
	h := newHarness(t, nil)
	var buf bytes.Buffer
	h.a.log = slog.New(slog.NewJSONHandler(&buf, nil))
	h.a.pol = &loFlap{}
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	now := time.Unix(1000, 0)
	for i := 0; i < 100; i++ {
		h.a.Tick(now.Add(time.Duration(i) * 500 * time.Millisecond))
	}
	evs := h.readEvents(t)
	lines := countMsg(logLines(t, &buf), MsgBounds)
	t.Logf("100 ticks: %d bound events, %d log lines", len(evs), lines)
	if len(evs) != 100 || lines != 1 {
		t.Fatalf("%d events (want 100), %d bound log lines (want 1)", len(evs), lines)
	}
}

// ccDatapath is a memDatapath that bounds through its own congestion
// control.
type ccDatapath struct{ *memDatapath }

func (ccDatapath) CCName() string { return "coopcc_0000test" }

// A flow on another congestion control than the datapath's is reported
// unbounded (lo/hi 0), whatever the bounds map holds for its destination.
func TestStatusFlowOnOtherCCIsNotBounded(t *testing.T) {
	h := newHarness(t, nil)
	h.a.deps.Datapath = ccDatapath{h.dp}
	on, off := flow("10.77.9.1:40000", "10.77.9.254:5201", 20), flow("10.77.9.1:40002", "10.77.9.254:5201", 80)
	on.CC, off.CC = "coopcc_0000test", "coopcc_dead0000"
	h.flows.flows = []Flow{on, off}
	h.a.Tick(time.Unix(1000, 0))
	r := h.a.Status()
	if len(r.Flows) != 2 {
		t.Fatalf("flows %+v", r.Flows)
	}
	for _, f := range r.Flows {
		bounded := f.Hi != 0
		if want := f.CC == "coopcc_0000test"; bounded != want {
			t.Errorf("flow on %s: hi %d, want bounded %v", f.CC, f.Hi, want)
		}
	}
}

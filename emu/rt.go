package emu

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/coopcc/coopcc/emu/des"
)

// Source is a non-blocking file descriptor the real-time loop reads frames
// from (a TAP); Handle gets each frame, with the simulation clock set to its
// arrival time.
type Source struct {
	FD     int
	Handle func(b []byte)
}

// RealTime drives a des.Sim against the monotonic clock on one locked OS
// thread: it sleeps in ppoll (timer slack 1 ns) on the sources until Spin
// before the next event, then spins; frames read from the sources are
// injected at their arrival time. Go timers are not used (they wake ~1 ms
// late on this machine, DESIGN §4).
type RealTime struct {
	Sim     *des.Sim
	Sources []Source
	// Spin is the initial final busy-wait before each event (default 40 µs).
	// It adapts: every 128 timed-out sleeps it becomes the 99th percentile of
	// their overshoot + 10 µs, within [Spin, MaxSpin].
	Spin    time.Duration
	MaxSpin time.Duration // default 150 µs
	Hist    Histogram     // lateness of every event against its schedule
	Start   time.Time     // wall time of simulation time 0
	// Priority > 0 runs the loop's thread SCHED_FIFO at that priority (root
	// only; silently ignored when refused), so other processes on a busy
	// machine cannot preempt it for a scheduler tick.
	Priority int
	// RTErr records why SCHED_FIFO could not be set ("" = it was, or not asked).
	RTErr string
	// SpinNow is the current adaptive spin (read after Run).
	SpinNow time.Duration
	// CPU is the loop thread's CPU time during Run (read after Run).
	CPU time.Duration
	// SpinDuty caps the share of each 20 ms window the loop may busy-wait
	// (default 0.8); past it, the loop sleeps until the event itself. It keeps
	// the loop below the kernel's RT throttling limit (95 % of a CPU), which
	// a loop spinning all the time hits and then stalls for tens of ms.
	SpinDuty float64
	// DutySleeps counts waits slept instead of spun because of SpinDuty.
	DutySleeps uint64

	// Writes: frames for the TAPs are written between events, when the next
	// event is far enough away (a TAP write runs the receiving namespace's
	// stack in this thread and takes tens of µs), or when the oldest has
	// waited MaxWriteDelay.
	MaxWriteDelay time.Duration // default 300 µs
	pending       []pendingWrite
	writeCost     des.Time // EWMA of one write
	WriteErrors   uint64   // writes refused for lack of room (overload)
	DownDrops     uint64   // writes to an interface that is down

	// Writers, when set, perform the TAP writes on their own threads (the
	// threaded engine): the loop only queues frames and wakes the writers
	// after each batch of due events. Nil = the inline engine (DeferredPort
	// writes between events on this thread).
	Writers *Writers
	// ArrivalHist is how much later than its arrival stamp each frame read
	// from a TAP entered the simulation (0 unless an event after the arrival
	// had already been handled).
	ArrivalHist Histogram
	// WriteHist is the inline engine's delivery lateness: write start −
	// the frame's scheduled time (the threaded engine's is in Writers).
	WriteHist Histogram

	// LateBy counts events more than 100 µs late by what the loop did before
	// the first of a run of late events: 0 handling events, 1 writing,
	// 2 sleeping, 3 spinning, 4 reading, 5 sleeping in place of a busy-wait
	// because of SpinDuty (the loop's own choice, not another process).
	LateBy [6]uint64
	// PhaseTime is the wall time the loop spent in each of the same phases
	// (waking the writer threads counts as writing); Reads and Writes count
	// the TAP frames it read and (inline engine) wrote.
	PhaseTime     [6]time.Duration
	Reads, Writes uint64

	stop     atomic.Bool
	sleeping atomic.Bool // threaded: the loop is (about to be) in ppoll
	stopFd   int         // eventfd: Stop, and (threaded) input frames waiting
	buf      []byte
}

// NewRealTime prepares a driver; call Run on the goroutine that should own the loop.
func NewRealTime(sim *des.Sim, sources []Source) (*RealTime, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	return &RealTime{Sim: sim, Sources: sources, Spin: 40 * time.Microsecond, MaxSpin: 150 * time.Microsecond, stopFd: fd, buf: make([]byte, 65536)}, nil
}

type pendingWrite struct {
	fd int
	b  []byte
	at des.Time
}

// DeferredPort is a Port whose writes the real-time loop performs between events.
type DeferredPort struct {
	RT *RealTime
	FD int
}

// WriteFrame queues b for writing to the fd.
func (p DeferredPort) WriteFrame(b []byte) error {
	p.RT.pending = append(p.RT.pending, pendingWrite{p.FD, b, p.RT.now()})
	return nil
}

// flush writes pending frames while the next event is more than twice the
// typical write cost away, or the oldest frame is overdue.
func (rt *RealTime) flush(maxDelay des.Time) {
	i := 0
	for ; i < len(rt.pending); i++ {
		now := rt.now()
		if next, ok := rt.Sim.Next(); ok && next-now < 2*rt.writeCost+10*des.Microsecond && now-rt.pending[i].at < maxDelay {
			break
		}
		w := rt.pending[i]
		rt.WriteHist.Add(now - w.at)
		rt.Writes++
		if _, err := unix.Write(w.fd, w.b); err != nil {
			if errors.Is(err, unix.EIO) {
				rt.DownDrops++ // the interface is down: not the emulator's overload
			} else {
				rt.WriteErrors++
			}
		}
		cost := rt.now() - now
		rt.writeCost += (cost - rt.writeCost) / 8
		rt.pending[i] = pendingWrite{}
	}
	if i > 0 {
		n := copy(rt.pending, rt.pending[i:])
		rt.pending = rt.pending[:n]
	}
}

// Stop makes Run return; safe from any goroutine.
func (rt *RealTime) Stop() {
	rt.stop.Store(true)
	var one = []byte{1, 0, 0, 0, 0, 0, 0, 0}
	_, _ = unix.Write(rt.stopFd, one)
}

// Close releases the driver's eventfd.
func (rt *RealTime) Close() error { return unix.Close(rt.stopFd) }

// now is the simulation time that corresponds to the wall clock.
func (rt *RealTime) now() des.Time { return des.Time(time.Since(rt.Start)) }

// Run handles events in real time until Stop (or until the optional end
// time, if > 0). Simulation time 0 is the moment Run starts, unless Start
// was set before.
func (rt *RealTime) Run(end des.Time) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	cpu0 := threadCPU()
	defer func() { rt.CPU = threadCPU() - cpu0 }()
	defer rt.schedule()()
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	if rt.Start.IsZero() {
		rt.Start = time.Now()
	}
	l, err := rt.newLoop(end)
	if err != nil {
		return err
	}
	for !rt.stop.Load() {
		if done, err := l.iterate(); done || err != nil {
			return err
		}
	}
	return nil
}

// schedule gives the loop's thread what it needs to keep time (enough Ps
// for the writer threads, SCHED_FIFO at rt.Priority) and returns what hands
// it back.
//
// Every thread of the process runs at the one priority, the loop's and the
// writers' included: never one above the Go runtime's other threads, which
// those threads may wait for. A goroutine coming back from a syscall waits,
// in the runtime's casgstatus, for the garbage collector to finish scanning
// its stack; it spins there, yielding the CPU with sched_yield, which gives
// way only to threads of its own priority or above. Until 2026-11-29 the
// loop and the writer threads ran one priority above the runtime's other
// threads: when the collector that was scanning them ran on one of those,
// the loop and a writer spun on both cores of the 2-core VM and the
// collector never ran again — the emulator's clock stopped mid-run, its
// frames with it, and SIGTERM went unanswered (perf: both threads in
// casgstatus's procyield and sched_yield; 3 of 49 heterogeneous runs of one
// session). The lab demoted the stuck emulator and lost the run
// (docs/results.md, thirtieth session: "about once in ten 802.11ac runs").
func (rt *RealTime) schedule() (restore func()) {
	procs := runtime.GOMAXPROCS(0)
	if rt.Writers != nil {
		// A P for the loop, one per writer thread and two for the rest, so
		// that a thread coming back from a syscall never waits for a P
		// (GOMAXPROCS counts Ps, not cores).
		runtime.GOMAXPROCS(max(procs, rt.Writers.Len()+3))
	}
	fifo := rt.Priority > 0
	if fifo {
		if err := SetProcessFIFO(rt.Priority); err != nil {
			rt.RTErr = err.Error()
		}
	}
	return func() {
		if fifo {
			_ = SetProcessFIFO(0) // hand the threads back as ordinary ones
		}
		if rt.Writers != nil {
			runtime.GOMAXPROCS(procs)
		}
	}
}

// rtLoop is the state of one Run: the poll set (the wakeup and, unless the
// I/O threads read them, the sources), the spin before an event that it
// adapts to how late ppoll wakes, the busy-wait budget, and the phase
// the loop is in (PhaseTime, LateBy).
type rtLoop struct {
	rt               *RealTime
	end              des.Time
	pfds             []unix.PollFd
	threaded         bool // the I/O threads read the sources and wake the loop through stopFd
	spin             des.Time
	minSpin, maxSpin des.Time
	maxDelay         des.Time
	over             [128]des.Time // how late ppoll woke, the last len(over) times
	nover            int
	duty             spinDuty
	phase            int
}

// newLoop prepares the loop of a Run until end (0 = until Stop) and starts
// the writer threads, if any.
func (rt *RealTime) newLoop(end des.Time) (*rtLoop, error) {
	l := &rtLoop{rt: rt, end: end, threaded: rt.Writers != nil && rt.Writers.Reads}
	l.pfds = make([]unix.PollFd, 0, len(rt.Sources)+1)
	l.pfds = append(l.pfds, unix.PollFd{Fd: int32(rt.stopFd), Events: unix.POLLIN})
	if rt.Writers != nil {
		var srcs []Source
		if l.threaded {
			srcs = rt.Sources
		}
		if err := rt.Writers.begin(rt.Start, srcs, rt.wake, rt.Priority); err != nil {
			return nil, err
		}
	}
	if !l.threaded {
		for _, s := range rt.Sources {
			l.pfds = append(l.pfds, unix.PollFd{Fd: int32(s.FD), Events: unix.POLLIN})
		}
	}
	l.spin = des.Time(rt.Spin)
	l.maxDelay = des.Time(rt.MaxWriteDelay)
	if l.maxDelay <= 0 {
		l.maxDelay = 300 * des.Microsecond
	}
	l.minSpin, l.maxSpin = l.spin, max(des.Time(rt.MaxSpin), l.spin)
	l.duty = spinDuty{max: rt.SpinDuty}
	if l.duty.max <= 0 {
		l.duty.max = 0.8
	}
	return l, nil
}

// iterate runs one round of the loop: the events that are due, the writes
// that are, then a busy wait or a sleep until the next event (or input).
// It reports done once the end time has passed.
func (l *rtLoop) iterate() (done bool, err error) {
	rt := l.rt
	now, done := l.runDue()
	if done {
		return true, nil
	}
	if rt.Writers != nil {
		rt.Writers.Kick()
		rt.PhaseTime[1] += time.Duration(rt.now() - now)
		now = rt.now()
	}
	if l.end > 0 && now > l.end {
		return true, nil
	}
	if len(rt.pending) > 0 {
		l.phase = 1
		rt.flush(l.maxDelay)
		t := rt.now()
		rt.PhaseTime[1] += time.Duration(t - now)
		now = t
		if n, ok := rt.Sim.Next(); ok && n <= now {
			return false, nil
		}
	}
	next, ok := rt.Sim.Next()
	wait := des.Time(-1)
	if ok {
		wait = next - now
	}
	sleepFor, sleepPhase := wait-l.spin, 2
	if ok && wait <= l.spin {
		if l.duty.allow(now) {
			l.busyWait(now, next)
			return false, nil
		}
		if wait <= 0 {
			return false, nil // due already (the writers' wakeup took the time)
		}
		sleepFor, sleepPhase = wait, 5 // over the busy-wait budget: sleep until the event itself
		rt.DutySleeps++
	}
	return false, l.sleep(now, ok, sleepFor, sleepPhase)
}

// runDue handles every event that is due (and, with I/O threads, the frames
// they read, at their arrival time) and returns the time it finished; done
// once the end time has passed.
func (l *rtLoop) runDue() (now des.Time, done bool) {
	rt := l.rt
	now = rt.now()
	t0 := now
	for {
		next, ok := rt.Sim.Next()
		if l.threaded {
			// Frames the I/O threads read enter at their arrival time,
			// after every event up to it.
			if w, f := rt.Writers.nextIn(); f != nil && (!ok || f.at < next) {
				rt.inject(w)
				now = rt.now()
				continue
			}
		}
		if !ok || next > now {
			break
		}
		if l.end > 0 && (next > l.end || now > l.end) { // bounded in wall time even when behind
			return now, true
		}
		late := now-next > 100*des.Microsecond
		if late {
			rt.LateBy[l.phase]++
		}
		rt.Hist.Add(now - next)
		rt.Sim.Step()
		if !late { // a late event's successors inherit its cause
			l.phase = 0
		}
		now = rt.now()
	}
	rt.PhaseTime[0] += time.Duration(now - t0)
	return now, false
}

// busyWait spins from now until the event at next (or, with I/O threads,
// until a frame comes in), within the busy-wait budget.
func (l *rtLoop) busyWait(now, next des.Time) {
	rt := l.rt
	l.phase = 3
	for rt.now() < next {
		if l.threaded && rt.Writers.hasIn() {
			break
		}
	}
	t := rt.now()
	l.duty.spent(t - now)
	rt.PhaseTime[3] += time.Duration(t - now)
}

// sleep sleeps in ppoll from now for sleepFor (no limit unless timed), or
// until the overdue writes or input call, in phase sleepPhase; it adapts
// the spin to how late ppoll woke and drains the sources that are ready.
func (l *rtLoop) sleep(now des.Time, timed bool, sleepFor des.Time, sleepPhase int) error {
	rt := l.rt
	var ts *unix.Timespec
	if t, ok := l.timeout(now, timed, sleepFor); ok {
		ts = &t
	}
	for i := range l.pfds {
		l.pfds[i].Revents = 0
	}
	if l.threaded {
		rt.sleeping.Store(true)
		if rt.Writers.hasIn() {
			rt.sleeping.Store(false)
			return nil
		}
	}
	t0 := rt.now()
	l.phase = sleepPhase
	n, err := unix.Ppoll(l.pfds, ts, nil)
	t1 := rt.now()
	if l.threaded {
		rt.sleeping.Store(false)
		if n > 0 && l.pfds[0].Revents&unix.POLLIN != 0 {
			var b [8]byte
			_, _ = unix.Read(rt.stopFd, b[:]) // reset the wakeup
		}
	}
	rt.PhaseTime[sleepPhase] += time.Duration(t1 - t0)
	if n == 0 && ts != nil {
		l.adapt(t1 - t0 - sleepFor)
	}
	if err != nil && !errors.Is(err, unix.EINTR) {
		return fmt.Errorf("ppoll: %w", err)
	}
	if n <= 0 || l.threaded {
		return nil
	}
	return l.drainReady()
}

// timeout is ppoll's timeout: sleepFor (none, ok false, unless timed),
// shortened to when the oldest pending write falls due. It is returned by
// value: a pointer returned from here would put every sleep's timeout on
// the heap (the garbage collector then costs the loop its tail lateness).
func (l *rtLoop) timeout(now des.Time, timed bool, sleepFor des.Time) (ts unix.Timespec, ok bool) {
	rt := l.rt
	if timed {
		ts, ok = unix.NsecToTimespec(sleepFor), true
	}
	if len(rt.pending) > 0 { // come back for the overdue writes
		d := max(rt.pending[0].at+l.maxDelay-now, 0)
		if !ok || unix.TimespecToNsec(ts) > d {
			ts, ok = unix.NsecToTimespec(d), true
		}
	}
	return ts, ok
}

// adapt records how late a timed ppoll woke (late) and, every len(over)
// wakeups, sets the spin to what covers them (adaptSpin).
func (l *rtLoop) adapt(late des.Time) {
	l.over[l.nover] = late
	if l.nover++; l.nover == len(l.over) {
		l.nover = 0
		l.spin = min(max(adaptSpin(l.over[:]), l.minSpin), l.maxSpin)
		l.rt.SpinNow = time.Duration(l.spin)
	}
}

// drainReady reads every source that ppoll found ready.
func (l *rtLoop) drainReady() error {
	rt := l.rt
	for i, s := range rt.Sources {
		if l.pfds[i+1].Revents&(unix.POLLIN|unix.POLLERR|unix.POLLHUP) != 0 {
			l.phase = 4
			t := rt.now()
			err := rt.drain(s)
			rt.PhaseTime[4] += time.Duration(rt.now() - t)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// wake makes a sleeping loop return from ppoll (I/O threads, after queueing
// input frames).
func (rt *RealTime) wake() {
	if rt.sleeping.CompareAndSwap(true, false) {
		var one = []byte{1, 0, 0, 0, 0, 0, 0, 0}
		_, _ = unix.Write(rt.stopFd, one)
	}
}

// inject hands w's oldest input frame to its source's handler at its
// arrival time, or at the simulation's present if an event after the
// arrival was already handled (that difference goes into ArrivalHist).
func (rt *RealTime) inject(w *writer) {
	t0 := rt.now()
	f, _ := w.in.pop()
	t := max(f.at, rt.Sim.Now())
	rt.ArrivalHist.Add(t - f.at)
	rt.Sim.Advance(t)
	rt.Sources[f.src].Handle(f.b)
	rt.Reads++
	rt.PhaseTime[4] += time.Duration(rt.now() - t0)
}

// drain reads up to 64 frames from s, each stamped with its arrival time
// (never later than the next pending event, so simulation time stays monotonic).
func (rt *RealTime) drain(s Source) error {
	for k := 0; k < 64; k++ {
		if next, ok := rt.Sim.Next(); ok && next <= rt.now() {
			return nil // an event is due: the rest waits in the kernel's ring
		}
		n, err := unix.Read(s.FD, rt.buf)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				return nil
			}
			return fmt.Errorf("read frame: %w", err)
		}
		if n <= 0 {
			return nil
		}
		rt.Reads++
		b := make([]byte, n)
		copy(b, rt.buf[:n])
		t := rt.now()
		if next, ok := rt.Sim.Next(); ok && next < t {
			t = next
		}
		rt.Sim.Advance(t)
		s.Handle(b)
		if rt.Writers != nil {
			rt.Writers.Kick()
		}
	}
	return nil
}

// Histogram counts lateness in 1 µs buckets up to limitUs (default 100 ms;
// longer samples count in the last bucket), with an exact max. The buckets
// are allocated on the first sample.
type Histogram struct {
	buckets []uint64
	limitUs int
	n       uint64
	max     des.Time
}

// Add records one lateness sample (negative counts as 0).
func (h *Histogram) Add(d des.Time) {
	if h.buckets == nil {
		if h.limitUs <= 0 {
			h.limitUs = 100000
		}
		h.buckets = make([]uint64, h.limitUs+1)
	}
	if d < 0 {
		d = 0
	}
	if d > h.max {
		h.max = d
	}
	us := d / des.Microsecond
	if us >= int64(len(h.buckets)) {
		us = int64(len(h.buckets)) - 1
	}
	h.buckets[us]++
	h.n++
}

// Merge adds o's samples to h (bucket by bucket, up to h's limit).
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.buckets {
		if c == 0 {
			continue
		}
		h.Add(des.Time(i) * des.Microsecond)
		h.buckets[min(i, len(h.buckets)-1)] += c - 1
		h.n += c - 1
	}
	h.max = max(h.max, o.max)
}

// Count is the number of samples.
func (h *Histogram) Count() uint64 { return h.n }

// Max is the largest sample.
func (h *Histogram) Max() des.Time { return h.max }

// Quantile returns the q-quantile (0..1) in microseconds (bucket upper bound).
func (h *Histogram) Quantile(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	target := uint64(q * float64(h.n))
	if target >= h.n {
		target = h.n - 1
	}
	var c uint64
	for i, b := range h.buckets {
		c += b
		if c > target {
			return float64(i + 1)
		}
	}
	return float64(len(h.buckets))
}

// spinDuty tracks the loop's busy-wait share of the current 20 ms window.
type spinDuty struct {
	max         float64
	start, spun des.Time
}

// allow reports whether the loop may busy-wait now (a new window starts
// every 20 ms).
func (d *spinDuty) allow(now des.Time) bool {
	if now-d.start >= 20*des.Millisecond {
		d.start, d.spun = now, 0
	}
	return float64(d.spun) < d.max*float64(20*des.Millisecond)
}

// spent adds a busy-wait's duration to the window.
func (d *spinDuty) spent(t des.Time) { d.spun += t }

// adaptSpin is the 99th percentile of the sleep overshoots + 10 µs.
func adaptSpin(over []des.Time) des.Time {
	s := append([]des.Time(nil), over...)
	slices.Sort(s)
	return s[len(s)*99/100] + 10*des.Microsecond
}

// SetProcessFIFO moves every thread of this process to SCHED_FIFO at prio
// (threads created later inherit it from their creator). Handoffs inside the
// Go runtime (a goroutine locked to its thread getting a P back after a
// syscall) then do not wait behind ordinary processes on a loaded machine.
func SetProcessFIFO(prio int) error {
	tids, err := threadIDs("self")
	if err != nil {
		return err
	}
	policy := unix.SCHED_FIFO
	if prio <= 0 {
		policy, prio = unix.SCHED_NORMAL, 0
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: uint32(policy), Priority: uint32(prio)}
	for _, tid := range tids {
		if err := unix.SchedSetAttr(tid, &attr, 0); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("set SCHED_FIFO on thread %d: %w", tid, err)
		}
	}
	return nil
}

// DemoteProcess moves every thread of process pid to ordinary scheduling
// (SCHED_NORMAL). A SCHED_FIFO emulator whose threads are starved by another
// real-time process of higher priority cannot even act on SIGKILL (seen on
// the shared lab machine: killed emulators stayed runnable for minutes);
// demoted, it exits at once. Threads that are gone are skipped.
func DemoteProcess(pid int) error {
	tids, err := threadIDs(strconv.Itoa(pid))
	if err != nil {
		return err
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}
	var errs []error
	for _, tid := range tids {
		if err := unix.SchedSetAttr(tid, &attr, 0); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("thread %d: %w", tid, err))
		}
	}
	return errors.Join(errs...)
}

// threadIDs lists the threads of process proc ("self" or a pid) from
// /proc/PROC/task; entries that are not thread ids are skipped.
func threadIDs(proc string) ([]int, error) {
	tasks, err := os.ReadDir("/proc/" + proc + "/task")
	if err != nil {
		return nil, fmt.Errorf("list threads of %s: %w", proc, err)
	}
	tids := make([]int, 0, len(tasks))
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

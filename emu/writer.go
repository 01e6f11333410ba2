package emu

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/coopcc/coopcc/emu/des"
)

// ringSize is the capacity of one writer's queue (frames). A full queue means
// the writer threads fell behind by this many frames: the frame is dropped and
// counted as the writers' overload.
const ringSize = 8192

// outFrame is one frame waiting for a writer: the TAP fd, the bytes and the
// simulation time at which the engine handed it on (its scheduled write time).
type outFrame struct {
	fd int
	b  []byte
	at des.Time
}

// inFrame is one frame an I/O thread read: the index of its source in the
// loop's Sources, the bytes and its arrival time (simulation clock).
type inFrame struct {
	src int
	b   []byte
	at  des.Time
}

// spscRing is a single-producer single-consumer lock-free queue between the
// real-time loop and one I/O thread.
type spscRing[T any] struct {
	head atomic.Uint64 // next slot to pop (consumer)
	_    [56]byte
	tail atomic.Uint64 // next slot to push (producer)
	_    [56]byte
	buf  [ringSize]T
}

// push appends f; false when the ring is full.
func (r *spscRing[T]) push(f T) bool {
	t := r.tail.Load()
	if t-r.head.Load() >= ringSize {
		return false
	}
	r.buf[t%ringSize] = f
	r.tail.Store(t + 1)
	return true
}

// peek returns the oldest element without removing it.
func (r *spscRing[T]) peek() (*T, bool) {
	h := r.head.Load()
	if h == r.tail.Load() {
		return nil, false
	}
	return &r.buf[h%ringSize], true
}

// pop removes the oldest element; false when the ring is empty.
func (r *spscRing[T]) pop() (T, bool) {
	var zero T
	h := r.head.Load()
	if h == r.tail.Load() {
		return zero, false
	}
	f := r.buf[h%ringSize]
	r.buf[h%ringSize] = zero
	r.head.Store(h + 1)
	return f, true
}

// empty reports whether nothing is queued.
func (r *spscRing[T]) empty() bool { return r.head.Load() == r.tail.Load() }

// writer is one I/O thread: it drains its ring into the TAPs, reads the TAPs
// it owns into its input ring, and sleeps in epoll_wait on its eventfd and
// those TAPs when there is nothing to do.
type writer struct {
	ring     spscRing[outFrame]
	in       spscRing[inFrame]
	srcs     map[int]int // TAP fd -> index in the loop's Sources (reading)
	epfd     int
	inFull   uint64 // frames read but dropped: the input ring was full (overload)
	reads    uint64
	sleeping atomic.Bool
	dirty    bool // producer side: pushed since the last kick
	efd      int
	hist     Histogram // delivery lateness: write start − scheduled time
	errs     uint64    // writes refused (not for a down interface): overload
	down     uint64    // writes to an interface that is down (EIO): on purpose
	written  uint64
	full     uint64 // frames dropped because the ring was full (producer side)
	cpu      time.Duration
}

// Writers is a pool of writer threads that perform the TAP writes for the
// real-time loop, so that the receiving namespaces' network stacks (which a
// TAP write runs in the writing thread) never run on the timing thread. Every
// TAP is served by one writer (fd modulo the pool size), which keeps each
// TAP's frames in order.
type Writers struct {
	ws       []*writer
	start    time.Time
	priority int
	// Reads: the threads also read the TAPs (set before Run); otherwise the
	// loop reads them itself.
	Reads    bool
	stop     atomic.Bool
	wakeLoop func()
	once     sync.Once
	wg       sync.WaitGroup
	errMu    sync.Mutex
	setupErr error
}

// NewWriters prepares n writer threads (n >= 1), started by begin.
func NewWriters(n int) (*Writers, error) {
	if n < 1 {
		n = 1
	}
	p := &Writers{}
	for i := 0; i < n; i++ {
		fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("writer eventfd: %w", err)
		}
		w := &writer{efd: fd}
		w.hist.limitUs = 10000
		p.ws = append(p.ws, w)
	}
	return p, nil
}

// begin starts the I/O threads; start is the wall time of simulation time
// 0. The TAPs in srcs are read by the thread that writes them (fd modulo the
// pool size); wakeLoop is called after a thread queued input frames.
// priority > 0 runs the threads SCHED_FIFO at that priority: the loop's,
// the process's one (RealTime.schedule). Each writer yields the CPU
// (sched_yield) after every write, so a timing thread that shares its CPU
// waits for at most one write. RealTime.Run calls it once the process's
// scheduling is set.
func (p *Writers) begin(start time.Time, srcs []Source, wakeLoop func(), priority int) error {
	p.start, p.wakeLoop, p.priority = start, wakeLoop, priority
	for _, w := range p.ws {
		w.srcs = map[int]int{}
		w.epfd = -1
	}
	for i, s := range srcs {
		p.ws[s.FD%len(p.ws)].srcs[s.FD] = i
	}
	for _, w := range p.ws {
		fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return fmt.Errorf("I/O thread epoll: %w", err)
		}
		w.epfd = fd
		for _, src := range append([]int{w.efd}, keys(w.srcs)...) {
			ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(src)}
			if err := unix.EpollCtl(fd, unix.EPOLL_CTL_ADD, src, &ev); err != nil {
				return fmt.Errorf("I/O thread epoll add fd %d: %w", src, err)
			}
		}
	}
	for _, w := range p.ws {
		p.wg.Add(1)
		go p.loop(w)
	}
	return nil
}

// keys lists a map's keys.
func keys(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// nextIn is the I/O thread whose oldest input frame arrived first, or nil.
func (p *Writers) nextIn() (*writer, *inFrame) {
	var best *writer
	var bf *inFrame
	for _, w := range p.ws {
		if f, ok := w.in.peek(); ok && (bf == nil || f.at < bf.at) {
			best, bf = w, f
		}
	}
	return best, bf
}

// hasIn reports whether any input frame waits for the loop.
func (p *Writers) hasIn() bool {
	for _, w := range p.ws {
		if !w.in.empty() {
			return true
		}
	}
	return false
}

// Len is the number of writer threads.
func (p *Writers) Len() int { return len(p.ws) }

// Port returns the Port that queues frames for fd; sim gives the scheduled
// time of each frame (the simulation time when it is handed on).
func (p *Writers) Port(fd int, sim *des.Sim) Port {
	return asyncPort{w: p.ws[fd%len(p.ws)], fd: fd, sim: sim}
}

// asyncPort queues a frame on its writer's ring (real-time loop side).
type asyncPort struct {
	w   *writer
	fd  int
	sim *des.Sim
}

// WriteFrame queues b; the write itself happens on the writer thread after
// the loop's next Kick. A full ring drops the frame (counted as overload).
func (a asyncPort) WriteFrame(b []byte) error {
	if !a.w.ring.push(outFrame{fd: a.fd, b: b, at: a.sim.Now()}) {
		a.w.full++
		return nil // counted as the writers' overload, not as a port error
	}
	a.w.dirty = true
	return nil
}

// Kick wakes the writers that got frames since the last Kick and are asleep.
// Only the real-time loop calls it (after a batch of due events), so that a
// burst of frames costs at most one wakeup per writer.
func (p *Writers) Kick() {
	one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	for _, w := range p.ws {
		if !w.dirty {
			continue
		}
		w.dirty = false
		if w.sleeping.CompareAndSwap(true, false) {
			_, _ = unix.Write(w.efd, one)
		}
	}
}

// loop is one writer thread.
func (p *Writers) loop(w *writer) {
	defer p.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if p.priority > 0 {
		attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(p.priority)}
		if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
			p.errMu.Lock()
			p.setupErr = fmt.Errorf("writer SCHED_FIFO: %w", err)
			p.errMu.Unlock()
		}
	}
	cpu0 := threadCPU()
	defer func() { w.cpu = threadCPU() - cpu0 }()
	buf := make([]byte, 65536)
	events := make([]unix.EpollEvent, len(w.srcs)+1)
	for {
		p.drain(w)
		w.sleeping.Store(true)
		if !w.ring.empty() {
			w.sleeping.Store(false)
			continue
		}
		if p.stop.Load() {
			return
		}
		n, err := unix.EpollWait(w.epfd, events, -1)
		w.sleeping.Store(false)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		got := false
		for _, ev := range events[:max(n, 0)] {
			fd := int(ev.Fd)
			if fd == w.efd {
				_, _ = unix.Read(w.efd, buf[:8])
				continue
			}
			got = p.read(w, fd, buf) || got
		}
		if got {
			p.wakeLoop()
		}
	}
}

// read queues up to 64 frames from a TAP for the loop, each stamped with its
// arrival time; true if it queued any.
func (p *Writers) read(w *writer, fd int, buf []byte) bool {
	got := false
	for k := 0; k < 64; k++ {
		n, err := unix.Read(fd, buf)
		if err != nil || n <= 0 {
			break // EAGAIN: the ring is empty; other errors: the TAP is gone
		}
		at := des.Time(time.Since(p.start))
		w.reads++
		b := make([]byte, n)
		copy(b, buf[:n])
		if !w.in.push(inFrame{src: w.srcs[fd], b: b, at: at}) {
			w.inFull++
			continue
		}
		got = true
	}
	return got
}

// drain writes every queued frame, recording each one's delivery lateness.
func (p *Writers) drain(w *writer) {
	for {
		f, ok := w.ring.pop()
		if !ok {
			return
		}
		w.hist.Add(des.Time(time.Since(p.start)) - f.at)
		if _, err := unix.Write(f.fd, f.b); err != nil {
			if errors.Is(err, unix.EIO) {
				w.down++ // the interface is down: not the emulator's overload
			} else {
				w.errs++
			}
			continue
		}
		w.written++
		unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) // never fails
	}
}

// Close stops the writer threads after they have written what is queued,
// and releases their eventfds. Counters and histograms are final afterwards.
func (p *Writers) Close() error {
	p.once.Do(func() {
		p.stop.Store(true)
		one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
		for _, w := range p.ws {
			_, _ = unix.Write(w.efd, one)
		}
		p.wg.Wait()
		for _, w := range p.ws {
			_ = unix.Close(w.efd)
			if w.epfd > 0 {
				_ = unix.Close(w.epfd)
			}
		}
	})
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.setupErr
}

// WriterStats sums the writers' counters (after Close).
type WriterStats struct {
	Written    uint64        // frames written
	Errors     uint64        // writes refused (overload)
	DownDrops  uint64        // writes to a down interface (on purpose)
	QueueDrops uint64        // frames dropped because a writer's queue was full (overload)
	Reads      uint64        // frames read from the TAPs
	InputDrops uint64        // frames read but dropped: the loop fell a whole input ring behind (overload)
	CPU        time.Duration // the writer threads' CPU time
	Hist       Histogram
}

// Stats merges the writers' counters and delivery-lateness histograms.
func (p *Writers) Stats() WriterStats {
	var s WriterStats
	s.Hist.limitUs = 10000
	for _, w := range p.ws {
		s.Written += w.written
		s.Errors += w.errs
		s.DownDrops += w.down
		s.QueueDrops += w.full
		s.Reads += w.reads
		s.InputDrops += w.inFull
		s.CPU += w.cpu
		s.Hist.Merge(&w.hist)
	}
	return s
}

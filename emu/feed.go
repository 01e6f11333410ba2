package emu

import (
	"fmt"
	"io"
	"sync"
)

// feed hands the newest of a stream of snapshots from the engine's timing
// thread to one goroutine that applies them: offer never blocks, and a
// snapshot the goroutine has not read yet is replaced by a newer one (the
// link speeds' and the airtime files' writers).
type feed[T any] struct {
	in   chan T // the latest unread snapshot (capacity 1)
	quit chan struct{}
	done chan struct{}
	once sync.Once
}

func newFeed[T any]() *feed[T] {
	return &feed[T]{in: make(chan T, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// offer hands v to the goroutine, replacing an unread older snapshot. It
// never blocks (one caller: the timing thread).
func (f *feed[T]) offer(v T) {
	for {
		select {
		case f.in <- v:
			return
		default:
		}
		select {
		case <-f.in: // drop the stale snapshot the goroutine has not read yet
		default:
		}
	}
}

// start runs the goroutine that applies the snapshots until stop.
func (f *feed[T]) start(apply func(T)) {
	go func() {
		defer close(f.done)
		for {
			select {
			case v := <-f.in:
				apply(v)
			case <-f.quit:
				return
			}
		}
	}()
}

// stop ends the goroutine and waits for it (idempotent; only after start).
func (f *feed[T]) stop() {
	f.once.Do(func() {
		close(f.quit)
		<-f.done
	})
}

// errTally counts the errors of a feed's goroutine and tells the first one
// (the ones after it are only counted, as a driver that refuses once
// refuses every time). Read Errors and First after the feed stopped.
type errTally struct {
	what string    // names the work in the warning ("link speed", "airtime")
	warn io.Writer // where the first error is told (nil: nowhere)

	Errors uint64
	First  error
}

// note counts err (nil is no error).
func (t *errTally) note(err error) {
	if err == nil {
		return
	}
	t.Errors++
	if t.First == nil {
		t.First = err
		if t.warn != nil {
			fmt.Fprintf(t.warn, "emu: %s: %v (further errors are only counted)\n", t.what, err)
		}
	}
}

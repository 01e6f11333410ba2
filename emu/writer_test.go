package emu

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/coopcc/coopcc/emu/des"
)

// The writers write every queued frame, in order per fd, and record its
// delivery lateness.
func TestWritersDeliverInOrder(t *testing.T) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	sim := des.New()
	w, err := NewWriters(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.begin(time.Now(), nil, func() {}, 0); err != nil {
		t.Fatal(err)
	}
	p := w.Port(fds[1], sim)
	const n = 2000
	got := make([]byte, 0, n)
	buf := make([]byte, 4096)
	for i := 0; i < n; i++ {
		if err := p.WriteFrame([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 {
			w.Kick()
			time.Sleep(20 * time.Microsecond)
		}
		if k, err := unix.Read(fds[0], buf); err == nil {
			got = append(got, buf[:k]...)
		}
	}
	w.Kick()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for {
		k, err := unix.Read(fds[0], buf)
		if err != nil || k == 0 {
			break
		}
		got = append(got, buf[:k]...)
	}
	if len(got) != n {
		t.Fatalf("%d bytes written, want %d", len(got), n)
	}
	for i, b := range got {
		if b != byte(i) {
			t.Fatalf("byte %d = %d: out of order", i, b)
		}
	}
	s := w.Stats()
	if s.Written != n || s.Hist.Count() != n || s.Errors != 0 || s.QueueDrops != 0 {
		t.Fatalf("stats %+v", s)
	}
	t.Logf("delivery lateness p50 %.0f µs p99 %.0f µs max %.0f µs", s.Hist.Quantile(0.5), s.Hist.Quantile(0.99), float64(s.Hist.Max())/1e3)
}

package des

import "testing"

func TestOrderAndCancel(t *testing.T) {
	s := New()
	var got []int
	s.At(30, func() { got = append(got, 3) })
	e := s.At(20, func() { got = append(got, 2) })
	s.At(10, func() {
		got = append(got, 1)
		s.After(5, func() { got = append(got, 15) })
	})
	s.At(30, func() { got = append(got, 4) }) // same time: FIFO
	s.Cancel(e)
	s.Cancel(e) // twice is fine
	s.RunUntil(100)
	want := []int{1, 15, 3, 4}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if s.Now() != 100 || e.Pending() {
		t.Fatalf("now %d pending %v", s.Now(), e.Pending())
	}
}

func TestPastClampsToNow(t *testing.T) {
	s := New()
	s.Advance(50)
	ev := s.At(10, func() {})
	if ev.At() != 50 {
		t.Fatalf("event in the past scheduled at %d, want 50", ev.At())
	}
}

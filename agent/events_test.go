package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coopcc/coopcc/lab/results"
)

// The events file the agent writes is what the lab's loader reads
// (schema.BoundEvent on both sides): a written event comes back equal.
func TestEventsRoundTripThroughTheLabLoader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sta1.jsonl")
	l, err := OpenEventLog(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{T: time.Date(2026, 11, 22, 3, 10, 0, 512_300_000, time.UTC), Dst: "", Lo: 0, Hi: 17, N: 3, Policy: "coop", Reason: "coop: ..."},
		{T: time.Date(2026, 11, 22, 3, 10, 1, 0, time.FixedZone("X", 3600)), Dst: "10.0.1.1", Lo: 5, Hi: 40, N: 10, Policy: "hayakawa2016", Reason: "on"},
	}
	for _, e := range want {
		if err := l.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := results.ParseBounds(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d events, wrote %d", len(got), len(want))
	}
	for i := range want {
		w := want[i]
		if !got[i].T.Equal(w.T) || got[i].Dst != w.Dst || got[i].Lo != w.Lo || got[i].Hi != w.Hi || got[i].N != w.N || got[i].Policy != w.Policy || got[i].Reason != w.Reason {
			t.Errorf("event %d: wrote %+v, read %+v", i, w, got[i])
		}
	}
}

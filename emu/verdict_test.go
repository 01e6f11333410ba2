package emu

import (
	"strings"
	"testing"

	"github.com/coopcc/coopcc/emu/des"
)

// The verdict names the resource that ran out, and frames refused on purpose
// (an interface that is down) do not make a run invalid.
func TestVerdictNamesResource(t *testing.T) {
	cfg := Config{Stations: []Station{{}}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(cfg, des.New(), []Port{nil}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hist := func(us ...int) *Histogram {
		var h Histogram
		for _, u := range us {
			for i := 0; i < 100; i++ {
				h.Add(des.Time(u) * des.Microsecond)
			}
		}
		return &h
	}
	fast := hist(1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
	slow := hist(1, 1, 1, 1, 1, 1, 1, 1, 1, 5000)
	for _, c := range []struct {
		name           string
		sched, deliver *Histogram
		o              Overload
		lateBy         map[string]uint64
		down           uint64
		resource, text string
	}{
		{"valid", fast, fast, Overload{}, nil, 0, "", ""},
		{"interface down is on purpose", fast, fast, Overload{}, nil, 74, "", ""},
		{"woke late", slow, fast, Overload{}, map[string]uint64{"sleeping": 90, "handling": 10}, 0, "cpu", "CPUs were taken"},
		{"loop busy", slow, fast, Overload{}, map[string]uint64{"handling": 50, "reading": 40, "sleeping": 10}, 0, "timing_thread", "timing thread was saturated"},
		{"writers late", fast, slow, Overload{}, nil, 0, "writer_threads", "delivery lateness"},
		{"writer queue full", fast, fast, Overload{WriterQueueDrops: 3}, nil, 0, "writer_threads", "3 frames could not be written"},
		{"ring", fast, fast, Overload{TAPRingDrops: 5}, nil, 0, "tap_ring", "did not read them in time"},
	} {
		r := NewReport(e, c.sched, c.o, des.Second)
		r.LateBy, r.DownDrops = c.lateBy, c.down
		r.judgeDelivery(c.deliver)
		if r.Valid != (c.resource == "") || r.Resource != c.resource || !strings.Contains(r.Reason, c.text) {
			t.Errorf("%s: valid %v resource %q reason %q; want resource %q mentioning %q", c.name, r.Valid, r.Resource, r.Reason, c.resource, c.text)
		}
	}
}

package emu

import (
	"context"
	"strings"
	"testing"
	"time"

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
		{"a busy host", slow, fast, Overload{}, map[string]uint64{"handling": 50, "writing": 40, "sleeping": 10}, 0, "timing_thread", "host took 6 % of its CPU time during the run (steal)"},
	} {
		r := NewReport(e, c.sched, c.o, des.Second)
		r.LateBy, r.DownDrops = c.lateBy, c.down
		if c.name == "a busy host" {
			r.CPUSteal = 0.06
		}
		r.judgeDelivery(c.deliver)
		if r.Valid != (c.resource == "") || r.Resource != c.resource || !strings.Contains(r.Reason, c.text) {
			t.Errorf("%s: valid %v resource %q reason %q; want resource %q mentioning %q", c.name, r.Valid, r.Resource, r.Reason, c.resource, c.text)
		}
	}
}

// /proc/stat's aggregate line: steal is the eighth value; guest time, already
// counted in user, is not added again.
func TestCPUSteal(t *testing.T) {
	p := parseCPUStat("cpu  224521 0 141571 702894 1645 0 9006 64595 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n")
	q := parseCPUStat("cpu  224621 0 141621 702994 1645 0 9006 64645 7 0\n")
	if !p.ok || p.steal != 64595 || p.total != 224521+141571+702894+1645+9006+64595 {
		t.Fatalf("parsed %+v", p)
	}
	if got := p.stealShare(q); got != 50.0/300 {
		t.Errorf("steal share %v, want 50 of 300 ticks", got)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 3"} {
		if st := parseCPUStat(bad); st.ok {
			t.Errorf("%q parsed as %+v", bad, st)
		}
	}
	if got := p.stealShare(p); got != -1 {
		t.Errorf("no time between the readings: %v, want -1", got)
	}
}

// HostSteal samples /proc/stat over its interval: a share in [0, 1] here
// (or -1 where the kernel accounted no time in 20 ms), and -1 when its
// context ends first.
func TestHostSteal(t *testing.T) {
	if s := HostSteal(context.Background(), 20*time.Millisecond); s != -1 && (s < 0 || s > 1) {
		t.Errorf("HostSteal over 20 ms = %v, want a share in [0, 1] or -1", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if s := HostSteal(ctx, time.Hour); s != -1 {
		t.Errorf("HostSteal with its context ended = %v, want -1 at once", s)
	}
}

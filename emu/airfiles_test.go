package emu

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/airtime"
	"github.com/coopcc/coopcc/emu/des"
)

// TestAirtimeCounters: one station uploads, the AP sends to the other; each
// station's own airtime is its attempts and the attempts addressed to it,
// and the two together are the busy medium (no collision can happen with
// one contender a side at a time; the AP's and sta1's attempts may collide,
// so allow a little).
func TestAirtimeCounters(t *testing.T) {
	cfg := Config{Stations: []Station{{}, {}}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	e, _, _ := testEngine(t, cfg)
	var got [][]airtime.Counters
	e.Airtime = func(c []airtime.Counters) { got = append(got, c) }
	for range 900 { // about 0.8 s of both queues' frames
		e.FromStation(0, frame(cfg.Server.MAC, cfg.Stations[0].MAC, 1500))
		e.FromServer(frame(cfg.Stations[1].MAC, cfg.Server.MAC, 1500))
	}
	e.Sim.RunUntil(des.Second)
	if len(got) < 9 {
		t.Fatalf("%d airtime snapshots in 1 s, want one per %v", len(got), time.Duration(MediumInterval))
	}
	d, ok := got[5][0].Sub(got[1][0])
	d1, ok1 := got[5][1].Sub(got[1][1])
	if !ok || !ok1 {
		t.Fatalf("counters went backwards: %+v, %+v", got[1], got[5])
	}
	if d.Channel != 4*time.Duration(MediumInterval) || d.Busy != d1.Busy || d.Channel != d1.Channel {
		t.Errorf("channel %v / %v, busy %v / %v: want 400 ms and one medium", d.Channel, d1.Channel, d.Busy, d1.Busy)
	}
	s0, s1 := d.Shares(), d1.Shares()
	if d.Rx != 0 || d1.Tx != 0 || s0.Own < 0.2 || s1.Own < 0.2 {
		t.Errorf("sta1 tx %v rx %v, sta2 tx %v rx %v: want sta1 only sending, sta2 only receiving", d.Tx, d.Rx, d1.Tx, d1.Rx)
	}
	if sum := s0.Own + s1.Own; math.Abs(sum-s0.Busy) > 0.05 {
		t.Errorf("own shares %.3f + %.3f = %.3f, busy %.3f: the two stations' airtime is the busy medium", s0.Own, s1.Own, sum, s0.Busy)
	}
}

// TestAirtimeWriter: the files exist (zero) before the first sample, and a
// snapshot reaches them in package airtime's format.
func TestAirtimeWriter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "air")
	w, err := newAirtimeWriter(dir, []Station{{Name: "sta1"}, {Name: "sta2"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := airtime.ReadFile(AirtimeFile(dir, "sta2")); err != nil || c != (airtime.Counters{}) {
		t.Fatalf("before any sample: %+v, %v; want zero counters", c, err)
	}
	want := airtime.Counters{Channel: time.Second, Busy: 700 * time.Millisecond, Tx: 300 * time.Millisecond, Rx: 20 * time.Millisecond}
	w.feed.start(w.write)
	w.feed.offer([]airtime.Counters{{}, want})
	w.feed.stop()
	// stop may come before the goroutine read the snapshot: write it as the
	// goroutine would have.
	if c, _ := airtime.ReadFile(AirtimeFile(dir, "sta2")); c != want {
		w.write([]airtime.Counters{{}, want})
	}
	if c, err := airtime.ReadFile(AirtimeFile(dir, "sta2")); err != nil || c != want || w.Errors != 0 {
		t.Errorf("sta2's file: %+v, %v (%d errors); want %+v", c, err, w.Errors, want)
	}
}

// TestAirtimeWriterCountsFailedWrites: a write that fails (its directory
// gone) is counted, the first is told once, and the next ones only counted.
func TestAirtimeWriterCountsFailedWrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "air")
	var warn bytes.Buffer
	w, err := newAirtimeWriter(dir, []Station{{Name: "sta1"}}, &warn)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		w.write([]airtime.Counters{{Channel: time.Second}})
	}
	if w.Errors != 3 || w.First == nil || !strings.Contains(w.First.Error(), "sta1") {
		t.Errorf("%d errors, first %v: want 3, the first naming sta1's file", w.Errors, w.First)
	}
	if n := strings.Count(warn.String(), "emu: airtime:"); n != 1 {
		t.Errorf("told %d times (%q), want once", n, warn.String())
	}
}

// TestNeighbourNetwork: another network's station on the channel takes
// air in proportion to its load; none of its frames reaches the emulated
// network; and with AirtimeBSSRx a station's counters leave it out of this
// network's receive time, so it is the foreign share of the busy air —
// without it the files carry no BSSRx.
func TestNeighbourNetwork(t *testing.T) {
	run := func(bssRx bool) (airtime.Shares, *Engine, airtime.Counters) {
		cfg := Config{Stations: []Station{{}}, AirtimeBSSRx: bssRx, Neighbour: NeighbourConfig{LoadMbps: 10}}
		if err := cfg.Normalize(); err != nil {
			t.Fatal(err)
		}
		e, _, _ := testEngine(t, cfg)
		var got [][]airtime.Counters
		e.Airtime = func(c []airtime.Counters) { got = append(got, c) }
		for range 1500 { // sta1 saturated for the second
			e.FromStation(0, frame(cfg.Server.MAC, cfg.Stations[0].MAC, 1500))
		}
		// Broadcasts go to every node on the air, the neighbour's too,
		// which ignores them (another BSSID).
		e.FromStation(0, frame("ff:ff:ff:ff:ff:ff", cfg.Stations[0].MAC, 60))
		e.FromServer(frame("ff:ff:ff:ff:ff:ff", cfg.Server.MAC, 60))
		e.Sim.RunUntil(des.Second)
		d, ok := got[len(got)-1][0].Sub(got[1][0])
		if !ok {
			t.Fatalf("counters went backwards: %+v, %+v", got[1], got[len(got)-1])
		}
		return d.Shares(), e, d
	}
	s, e, d := run(true)
	nb := float64(e.nb.airtime()) / float64(des.Second)
	// 10 Mbit/s of 1500-byte frames at 54 Mbit/s: ~833 frames/s of ~0.3 ms each.
	if nb < 0.15 || nb > 0.4 {
		t.Errorf("the neighbour took %.2f of the air at 10 Mbit/s, want 0.15–0.4", nb)
	}
	if got := float64(e.nb.bytes*8) / 1e6; got < 8 || got > 12 {
		t.Errorf("the neighbour's AP received %.1f Mbit in 1 s, want ~10", got)
	}
	if e.UpBytes == 0 || e.DownBytes != 60 {
		t.Errorf("up %d, down %d bytes: sta1's frames to the server and the server's broadcast to sta1 only, none of the neighbour's", e.UpBytes, e.DownBytes)
	}
	var h Histogram
	h.Add(1000)
	rep := NewReport(e, &h, Overload{}, des.Second)
	if math.Abs(rep.NeighbourAirFraction-nb) > 1e-9 || rep.NeighbourMbps < 8 || rep.RateControl["neighbour-sta"] != "constant" {
		t.Errorf("report: neighbour air %.3f (want %.3f), %.1f Mbit/s, rate control %q", rep.NeighbourAirFraction, nb, rep.NeighbourMbps, rep.RateControl["neighbour-sta"])
	}
	dir := t.TempDir()
	if err := WriteStats(dir, e, rep); err != nil {
		t.Errorf("WriteStats with a neighbour: %v", err)
	}
	if !d.HasBSSRx || math.Abs(s.Foreign-nb) > 0.05 || s.Foreign >= s.Busy {
		t.Errorf("shares %+v (BSSRx %v, %v): want another network's %.2f of the air", s, d.BSSRx, d.HasBSSRx, nb)
	}
	if s, _, d := run(false); d.HasBSSRx || s.Foreign != 0 {
		t.Errorf("without AirtimeBSSRx: %+v, shares %+v; want no BSSRx", d, s)
	}
	bad := Config{Stations: []Station{{}}, Neighbour: NeighbourConfig{LoadMbps: 60}}
	if err := bad.Normalize(); err == nil || !strings.Contains(err.Error(), "neighbour") {
		t.Errorf("a load above the PHY rate: %v, want an error naming the neighbour", err)
	}
}

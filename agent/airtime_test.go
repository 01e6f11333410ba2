package agent

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/coopcc/coopcc/airtime"
	"github.com/coopcc/coopcc/peer"
)

// TestAirMeter: an interval needs two good readings in a row; a failed
// reading or counters that went backwards make it unknown.
func TestAirMeter(t *testing.T) {
	c := func(ms int64) airtime.Counters {
		d := time.Duration(ms) * time.Millisecond
		return airtime.Counters{Channel: d, Busy: d / 2, Tx: d / 10, Rx: d / 20}
	}
	var m airMeter
	for i, step := range []struct {
		c    airtime.Counters
		ok   bool
		want time.Duration // the interval's channel time (0 = unknown)
	}{
		{c(1000), true, 0}, // the first reading
		{c(1500), true, 500 * time.Millisecond},
		{c(2000), false, 0}, // a failed reading
		{c(2500), true, 0},  // good again, no interval yet
		{c(3000), true, 500 * time.Millisecond},
		{c(100), true, 0}, // restarted counters
		{c(600), true, 500 * time.Millisecond},
	} {
		if got := m.observe(step.c, step.ok); got.Channel != step.want {
			t.Errorf("reading %d: interval %+v, want %v of channel time", i, got, step.want)
		}
	}
}

// TestAirStatusRoundTrip: the interval as TLV 17 carries it, clamped, and
// back as shares.
func TestAirStatusRoundTrip(t *testing.T) {
	iv := airtime.Counters{Channel: 500 * time.Millisecond, Busy: 400 * time.Millisecond, Tx: 100 * time.Millisecond, Rx: 25 * time.Millisecond}
	ch, busy, own := airStatus(iv, peer.MaxAirChannel)
	if ch != 500000 || busy != 400000 || own != 125000 {
		t.Fatalf("airStatus = %d, %d, %d µs", ch, busy, own)
	}
	if s := airShares(ch, busy, own); s.Busy != 0.8 || s.Own != 0.25 {
		t.Errorf("airShares = %+v, want busy 0.8, own 0.25", s)
	}
	huge := airtime.Counters{Channel: time.Hour, Busy: 2 * time.Hour, Tx: 2 * time.Hour}
	if ch, busy, own := airStatus(huge, peer.MaxAirChannel); ch != peer.MaxAirChannel || busy != ch || own != ch {
		t.Errorf("an hour's interval: %d, %d, %d µs; want all at the 60 s limit", ch, busy, own)
	}
	if s := airShares(0, 0, 0); s != (airtime.Shares{}) {
		t.Errorf("no TLV: %+v, want unknown", s)
	}
}

// TestAgentReadsTheAirtimeFile: with monitor.airtime_file the agent reads
// the emulator's file, not nl80211; from the second tick the policy sees
// the interval's shares and the peers get them in the status (TLV 17).
func TestAgentReadsTheAirtimeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sta1.air")
	h := newHarness(t, func(c *Config) { c.Monitor.AirtimeFile = path })
	h.a.deps.Airtime = func(string) (airtime.Counters, error) {
		return airtime.Counters{}, errors.New("nl80211 read where a file was configured")
	}
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	now := time.Now()
	for i, c := range []airtime.Counters{
		{Channel: time.Second, Busy: 500 * time.Millisecond, Tx: 100 * time.Millisecond},
		{Channel: 1500 * time.Millisecond, Busy: 900 * time.Millisecond, Tx: 200 * time.Millisecond, Rx: 50 * time.Millisecond},
	} {
		if err := airtime.WriteFile(path, c); err != nil {
			t.Fatal(err)
		}
		h.a.Tick(now.Add(time.Duration(i) * 500 * time.Millisecond))
	}
	if got := h.pol.last.Air; got.Busy != 0.8 || got.Own != 0.3 {
		t.Errorf("the policy saw %+v; want busy 0.8, own 0.3 of the last 500 ms", got)
	}
	if s := h.a.OwnStatus(); s.AirChannel != 500000 || s.AirBusy != 400000 || s.AirOwn != 150000 {
		t.Errorf("own status air %d / %d / %d µs; want 500000 / 400000 / 150000", s.AirChannel, s.AirBusy, s.AirOwn)
	}
}

// TestAgentReadsAnotherNetworksAir: where the counters tell this network's
// frames apart (bss_rx_us), the policy sees another network's share of the
// busy air, the status reports it (air_foreign_us) and the metrics give it
// as coopcc_air_ratio{kind="foreign"}; without them neither is there.
func TestAgentReadsAnotherNetworksAir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sta1.air")
	h := newHarness(t, func(c *Config) { c.Monitor.AirtimeFile = path })
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	now := time.Now()
	for i, c := range []airtime.Counters{
		{Channel: time.Second, Busy: 500 * time.Millisecond, Tx: 100 * time.Millisecond, BSSRx: 100 * time.Millisecond, HasBSSRx: true},
		// 500 ms: busy 400, its own transmissions 100, its network's frames 100: 200 another network's.
		{Channel: 1500 * time.Millisecond, Busy: 900 * time.Millisecond, Tx: 200 * time.Millisecond, Rx: 50 * time.Millisecond, BSSRx: 200 * time.Millisecond, HasBSSRx: true},
	} {
		if err := airtime.WriteFile(path, c); err != nil {
			t.Fatal(err)
		}
		h.a.Tick(now.Add(time.Duration(i) * 500 * time.Millisecond))
	}
	if got := h.pol.last.Air; got.Busy != 0.8 || got.Foreign != 0.4 {
		t.Errorf("the policy saw %+v; want busy 0.8, another network's 0.4", got)
	}
	if f := h.a.Status().AirForeignUs; f == nil || *f != 200000 {
		t.Errorf("status air_foreign_us %v, want 200000", f)
	}
	fams := scrape(t, h.a)
	found := false
	for _, m := range fams["coopcc_air_ratio"].GetMetric() {
		if l := m.GetLabel(); len(l) == 1 && l[0].GetValue() == "foreign" {
			found = m.GetGauge().GetValue() == 0.4
		}
	}
	if !found {
		t.Errorf("no coopcc_air_ratio{kind=\"foreign\"} of 0.4 in %v", fams["coopcc_air_ratio"])
	}
	if err := airtime.WriteFile(path, airtime.Counters{Channel: 2 * time.Second, Busy: time.Second, Tx: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	h.a.Tick(now.Add(time.Second))
	if f := h.a.Status().AirForeignUs; f != nil || h.pol.last.Air.Foreign != 0 {
		t.Errorf("counters without bss_rx_us: status %v, policy %+v; want neither", f, h.pol.last.Air)
	}
}

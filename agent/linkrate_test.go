package agent

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/coopcc/coopcc/airtime"
	"github.com/coopcc/coopcc/internal/linkspeed"
	"github.com/coopcc/coopcc/internal/nettest"
	"github.com/coopcc/coopcc/internal/wifirate"
)

// rateSource is a fake ethtool or nl80211 reading that records its calls.
type rateSource struct {
	rate  float64
	err   error
	calls int
}

func (s *rateSource) read(string) (float64, error) { s.calls++; return s.rate, s.err }

// TestLinkRatesFallbackOrder: ethtool's speed wins when the driver has one
// (the lab's TAPs: nl80211 is not asked); nl80211's transmit bitrate is used
// when ethtool is not supported (a cfg80211 interface); nothing in nl80211
// (ErrNotWireless, wrapped as wifirate wraps it) is 0 without an error; other
// errors of either pass through.
func TestLinkRatesFallbackOrder(t *testing.T) {
	notWireless := fmt.Errorf("wifirate: wlan0: %w: not a wireless interface", wifirate.ErrNotWireless)
	for _, tc := range []struct {
		name          string
		eth, wifi     rateSource
		want          float64
		wantErr       bool
		wantWifiCalls int
	}{
		{"ethtool speed wins", rateSource{rate: 54}, rateSource{rate: 866.7}, 54, false, 0},
		{"ethtool unknown speed stays 0", rateSource{rate: 0}, rateSource{rate: 866.7}, 0, false, 0},
		{"ethtool error passes", rateSource{err: errors.New("no such device")}, rateSource{rate: 866.7}, 0, true, 0},
		{"nl80211 when ethtool is not supported", rateSource{err: linkspeed.ErrNotSupported}, rateSource{rate: 866.7}, 866.7, false, 1},
		{"not wireless is 0, no error", rateSource{err: linkspeed.ErrNotSupported}, rateSource{err: notWireless}, 0, false, 1},
		{"nl80211 error passes", rateSource{err: linkspeed.ErrNotSupported}, rateSource{err: errors.New("station dump: EAGAIN")}, 0, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eth, wifi := tc.eth, tc.wifi
			got, err := linkRates{ethtool: eth.read, wifi: wifi.read}.read("wlan0")
			if got != tc.want || (err != nil) != tc.wantErr || eth.calls != 1 || wifi.calls != tc.wantWifiCalls {
				t.Fatalf("read = %v, %v (ethtool asked %d×, nl80211 %d×); want %v, error %v, ethtool 1×, nl80211 %d×",
					got, err, eth.calls, wifi.calls, tc.want, tc.wantErr, tc.wantWifiCalls)
			}
		})
	}
	var eth, wifi rateSource
	if got, err := (linkRates{ethtool: eth.read, wifi: wifi.read}).read(""); got != 0 || err != nil || eth.calls+wifi.calls != 0 {
		t.Errorf("no interface: %v, %v, %d calls; want 0, nil, none", got, err, eth.calls+wifi.calls)
	}
}

// fakeReader is a wifirate.Reader stand-in that counts what was done to it.
type fakeReader struct {
	rate   float64
	asked  []string
	closed int
}

func (f *fakeReader) TxBitrate(ifname string) (float64, error) {
	f.asked = append(f.asked, ifname)
	return f.rate, nil
}

func (f *fakeReader) Airtime(ifname string) (airtime.Counters, error) {
	f.asked = append(f.asked, ifname)
	return airtime.Counters{}, wifirate.ErrNotWireless
}

func (f *fakeReader) Close() error { f.closed++; return nil }

// readerOpener opens fakeReaders and keeps them; failNext makes the next
// open fail.
type readerOpener struct {
	opened   []*fakeReader
	failNext bool
}

func (o *readerOpener) open() (txBitrater, error) {
	if o.failNext {
		o.failNext = false
		return nil, errors.New("socket: too many open files")
	}
	r := &fakeReader{rate: 144.4}
	o.opened = append(o.opened, r)
	return r, nil
}

// TestWifiLinkHoldsReader: the nl80211 reader is opened at the first
// reading, kept for the next ones, closed once by close, and opened again
// after a failed open or a close.
func TestWifiLinkHoldsReader(t *testing.T) {
	var o readerOpener
	w := &wifiLink{open: o.open}
	if err := w.close(); err != nil || len(o.opened) != 0 {
		t.Fatalf("close before any reading: %v, %d opened; want nil, none", err, len(o.opened))
	}
	o.failNext = true
	if _, err := w.txBitrate("wlan0"); err == nil {
		t.Fatal("a failed open gave no error")
	}
	for range 3 {
		if r, err := w.txBitrate("wlan0"); r != 144.4 || err != nil {
			t.Fatalf("txBitrate = %v, %v; want 144.4", r, err)
		}
	}
	if len(o.opened) != 1 || len(o.opened[0].asked) != 3 {
		t.Fatalf("%d readers opened for 3 readings; want 1 asked 3×", len(o.opened))
	}
	if err := w.close(); err != nil || o.opened[0].closed != 1 {
		t.Fatalf("close: %v, closed %d×; want once", err, o.opened[0].closed)
	}
	if err := w.close(); err != nil || o.opened[0].closed != 1 {
		t.Fatalf("second close: %v, closed %d×; want still once", err, o.opened[0].closed)
	}
	if _, err := w.txBitrate("wlan0"); err != nil || len(o.opened) != 2 {
		t.Fatalf("reading after close: %v, %d opened; want a second reader", err, len(o.opened))
	}
}

// TestRunUsesAndClosesNL80211: an agent whose interface has no ethtool
// speed gets nl80211's rate to its policy and its peers, through one reader
// for all its ticks, and Run closes that reader when it returns.
func TestRunUsesAndClosesNL80211(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Monitor.Interval.Duration = 10 * time.Millisecond
		c.Datapath.Lease.Duration = time.Second
	})
	var o readerOpener
	h.a.wifi = &wifiLink{open: o.open}
	eth := func(string) (float64, error) { return 0, linkspeed.ErrNotSupported }
	h.a.deps.LinkRate = linkRates{ethtool: eth, wifi: h.a.wifi.txBitrate}.read
	h.flows.flows = []Flow{flow("10.77.9.1:40000", "10.77.9.254:5201", 40)}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := h.a.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(o.opened) != 1 || len(o.opened[0].asked) < 2 || o.opened[0].closed != 1 {
		t.Fatalf("%d readers opened; want 1, asked on every tick (≥ 2) and closed once by Run", len(o.opened))
	}
	if h.pol.last.LinkRate != 144.4 || h.a.OwnStatus().LinkRate != 144400 {
		t.Errorf("policy saw %v Mbit/s, peers get %d kbit/s; want 144.4, 144400", h.pol.last.LinkRate, h.a.OwnStatus().LinkRate)
	}
}

// TestNewDefaultLinkRate: without Deps.LinkRate (or Deps.Airtime) the agent
// builds the ethtool-then-nl80211 source and holds its reader; with both
// given, none.
func TestNewDefaultLinkRate(t *testing.T) {
	h := newHarness(t, nil)
	if h.a.wifi == nil || h.a.deps.LinkRate == nil {
		t.Fatal("default link rate: no nl80211 reader holder")
	}
	if h.a.wifi.r != nil {
		t.Error("the nl80211 reader was opened before any reading")
	}
	a, err := New(h.a.Config(), Deps{Flows: h.flows, Datapath: h.dp, Peers: h.peers,
		NewPolicy: func(string, map[string]any) (Policy, error) { return h.pol, nil },
		LinkRate:  func(string) (float64, error) { return 1, nil },
		Airtime:   func(string) (airtime.Counters, error) { return airtime.Counters{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if a.wifi != nil {
		t.Error("a given LinkRate and Airtime still got an nl80211 reader holder")
	}
	a.closeWifi() // nothing to close: must not panic
}

// TestDefaultLinkRateOnLoopback: the real default source on this kernel.
// Loopback has no ethtool link settings, so nl80211 is asked; it has no rate
// for it (no such wireless device, or no nl80211 family where cfg80211 is
// not loaded), which is 0 without an error — and the reader that answered
// is held, then closed by closeWifi.
func TestDefaultLinkRateOnLoopback(t *testing.T) {
	if nettest.NoKernel() {
		t.Skip("needs the kernel's ethtool ioctl and generic netlink (" + nettest.NoKernelEnv + "=1)")
	}
	h := newHarness(t, nil)
	if r, err := h.a.deps.LinkRate("lo"); r != 0 || err != nil {
		t.Fatalf("LinkRate(lo) = %v, %v; want 0, nil", r, err)
	}
	if h.a.wifi.r == nil {
		t.Fatal("nl80211 was not asked for loopback (ethtool reports no speed for it)")
	}
	h.a.closeWifi()
	if h.a.wifi.r != nil {
		t.Error("closeWifi left the reader open")
	}
	if _, err := h.a.deps.LinkRate("nosuchdev0"); err == nil {
		t.Error("LinkRate of a missing interface gave no error")
	}
}

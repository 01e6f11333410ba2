package airtime

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sta1.air")
	want := Counters{Channel: 12*time.Second + 345*time.Microsecond, Busy: 9 * time.Second, Tx: 3 * time.Second, Rx: 250 * time.Millisecond}
	if err := WriteFile(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil || got != want {
		t.Fatalf("ReadFile = %+v, %v; want %+v", got, err, want)
	}
	b, _ := os.ReadFile(path)
	if s := string(b); s != "coopcc-airtime 1\nchannel_us 12000345\nbusy_us 9000000\ntx_us 3000000\nrx_us 250000\n" {
		t.Errorf("file form:\n%s", s)
	}
	if m, _ := filepath.Glob(path + ".tmp*"); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
	want.BSSRx, want.HasBSSRx = 5*time.Second, true
	if err := WriteFile(path, want); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(path); err != nil || got != want {
		t.Fatalf("with BSSRx: ReadFile = %+v, %v; want %+v", got, err, want)
	}
	if b, _ := os.ReadFile(path); !strings.HasSuffix(string(b), "rx_us 250000\nbss_rx_us 5000000\n") {
		t.Errorf("file form with BSSRx:\n%s", b)
	}
}

func TestFileErrors(t *testing.T) {
	for name, text := range map[string]string{
		"header":    "channel_us 1\nbusy_us 1\ntx_us 1\nrx_us 1\n",
		"missing":   "coopcc-airtime 1\nchannel_us 1\nbusy_us 1\ntx_us 1\n",
		"twice":     "coopcc-airtime 1\nchannel_us 1\nchannel_us 2\nbusy_us 1\ntx_us 1\nrx_us 1\n",
		"bss twice": "coopcc-airtime 1\nchannel_us 1\nbusy_us 1\ntx_us 1\nrx_us 1\nbss_rx_us 1\nbss_rx_us 1\n",
		"only bss":  "coopcc-airtime 1\nbss_rx_us 1\n",
		"unknown":   "coopcc-airtime 1\nchannel_us 1\nbusy_us 1\ntx_us 1\nrx_us 1\nbss_us 1\n",
		"negative":  "coopcc-airtime 1\nchannel_us -1\nbusy_us 1\ntx_us 1\nrx_us 1\n",
		"not a num": "coopcc-airtime 1\nchannel_us x\nbusy_us 1\ntx_us 1\nrx_us 1\n",
		"overflow":  "coopcc-airtime 1\nchannel_us 99999999999999999\nbusy_us 1\ntx_us 1\nrx_us 1\n",
		"empty":     "",
	} {
		var c Counters
		if err := c.UnmarshalText([]byte(text)); err == nil {
			t.Errorf("%s: no error for %q", name, text)
		} else if !strings.HasPrefix(err.Error(), "airtime: ") {
			t.Errorf("%s: error %q does not say it is the airtime file's", name, err)
		}
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none.air")); err == nil {
		t.Error("a missing file read without an error")
	}
}

func TestSubAndShares(t *testing.T) {
	a := Counters{Channel: time.Second, Busy: 600 * time.Millisecond, Tx: 100 * time.Millisecond, Rx: 50 * time.Millisecond}
	b := Counters{Channel: 1500 * time.Millisecond, Busy: 1000 * time.Millisecond, Tx: 200 * time.Millisecond, Rx: 100 * time.Millisecond}
	d, ok := b.Sub(a)
	if !ok || d.Channel != 500*time.Millisecond || d.Own() != 150*time.Millisecond {
		t.Fatalf("Sub = %+v, %v", d, ok)
	}
	if s := d.Shares(); s.Busy != 0.8 || s.Own < 0.2999 || s.Own > 0.3001 {
		t.Errorf("Shares = %+v, want busy 0.8, own 0.3", s)
	}
	if _, ok := a.Sub(b); ok {
		t.Error("counters that went backwards gave a usable interval")
	}
	if _, ok := a.Sub(a); ok {
		t.Error("an interval without channel time is usable")
	}
	if s := (Counters{Channel: time.Second, Busy: 2 * time.Second, Tx: 3 * time.Second}).Shares(); s.Busy != 1 || s.Own != 1 {
		t.Errorf("shares over 1 not clamped: %+v", s)
	}
}

// TestForeignShare: the busy air that is neither this interface's
// transmissions nor this network's frames is another network's; unknown
// (0) when either end of the interval lacks BSSRx.
func TestForeignShare(t *testing.T) {
	a := Counters{Channel: time.Second, Busy: 600 * time.Millisecond, Tx: 100 * time.Millisecond, Rx: 50 * time.Millisecond, BSSRx: 200 * time.Millisecond, HasBSSRx: true}
	b := Counters{Channel: 2 * time.Second, Busy: 1400 * time.Millisecond, Tx: 300 * time.Millisecond, Rx: 100 * time.Millisecond, BSSRx: 400 * time.Millisecond, HasBSSRx: true}
	d, ok := b.Sub(a)
	if !ok || !d.HasBSSRx || d.BSSRx != 200*time.Millisecond {
		t.Fatalf("Sub = %+v, %v", d, ok)
	}
	// busy 800 ms − own transmissions 200 − this network's 200: 400 ms of 1 s.
	if s := d.Shares(); math.Abs(s.Foreign-0.4) > 1e-9 || math.Abs(s.Busy-0.8) > 1e-9 {
		t.Errorf("Shares = %+v, want foreign 0.4 of a busy 0.8", s)
	}
	noBSS := b
	noBSS.BSSRx, noBSS.HasBSSRx = 0, false
	if d, ok := noBSS.Sub(a); !ok || d.HasBSSRx || d.Shares().Foreign != 0 {
		t.Errorf("an end without BSSRx: %+v, %v, shares %+v; want no BSSRx and no foreign share", d, ok, d.Shares())
	}
	back := a
	back.BSSRx = 500 * time.Millisecond
	if _, ok := b.Sub(back); ok {
		t.Error("a BSSRx that went backwards gave a usable interval")
	}
	if s := (Counters{Channel: time.Second, Busy: 300 * time.Millisecond, BSSRx: 0, HasBSSRx: true, Tx: 0}).Shares(); s.Foreign != s.Busy {
		t.Errorf("foreign %v above the busy %v", s.Foreign, s.Busy)
	}
}

package wifirate

import (
	"errors"
	"os/exec"
	"testing"

	"github.com/coopcc/coopcc/airtime"
	"github.com/coopcc/coopcc/internal/nettest"
)

// TestAirtimeLoopback: on the real kernel, in the test's own namespace and
// without privileges, the loopback interface has no airtime to read:
// ErrNotWireless (nl80211 has no such device, or there is no nl80211
// family), zero counters, and neither of the other sentinels.
func TestAirtimeLoopback(t *testing.T) {
	r, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := r.Airtime("lo")
	if !errors.Is(err, ErrNotWireless) || errors.Is(err, ErrNoChannelTime) || errors.Is(err, ErrNoDurations) || c != (airtime.Counters{}) {
		t.Fatalf("Airtime(lo) = %+v, %v; want zero counters, ErrNotWireless", c, err)
	}
	t.Logf("Airtime(lo): %v", err)
	if _, err := r.Airtime(""); err == nil || errors.Is(err, ErrNotWireless) {
		t.Errorf("Airtime of an empty name: %v; want an error other than ErrNotWireless", err)
	}
}

// TestTxBitrateNotWireless: on the real kernel, in a namespace of its own,
// interfaces that are not Wi-Fi (loopback, veth, dummy where the module
// exists) give ErrNotWireless — because nl80211 has no such device, or,
// where cfg80211 is not loaded (this project's VM), no nl80211 family at
// all — and a missing interface a different error. The reader is opened in
// the namespace and used from outside it: the veth exists only there, so
// finding it shows the sockets act where they were created.
func TestTxBitrateNotWireless(t *testing.T) {
	nettest.RequireRoot(t)
	ns := nettest.NewNS(t, "wrate")
	ns.Exec(t, "ip", "link", "add", "wv0", "type", "veth", "peer", "name", "wv1")
	devs := []string{"lo", "wv0"}
	if out, err := exec.Command("ip", "netns", "exec", ns.Name, "ip", "link", "add", "wd0", "type", "dummy").CombinedOutput(); err == nil {
		devs = append(devs, "wd0")
	} else {
		t.Logf("no dummy interface here (%v: %s); lo and veth only", err, out)
	}
	var r *Reader
	if err := ns.Do(func() (err error) { r, err = Open(); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	for _, dev := range devs {
		rate, err := r.TxBitrate(dev)
		if !errors.Is(err, ErrNotWireless) || rate != 0 {
			t.Errorf("TxBitrate(%s) = %v, %v; want 0, ErrNotWireless", dev, rate, err)
			continue
		}
		t.Logf("TxBitrate(%s): %v", dev, err)
		c, err := r.Airtime(dev)
		if !errors.Is(err, ErrNotWireless) || c != (airtime.Counters{}) {
			t.Errorf("Airtime(%s) = %+v, %v; want zero counters, ErrNotWireless", dev, c, err)
			continue
		}
		t.Logf("Airtime(%s): %v", dev, err)
	}
	if _, err := r.TxBitrate("nosuchdev0"); err == nil || errors.Is(err, ErrNotWireless) {
		t.Errorf("TxBitrate of a missing interface: %v; want an error other than ErrNotWireless", err)
	}
	if _, err := r.Airtime("nosuchdev0"); err == nil || errors.Is(err, ErrNotWireless) {
		t.Errorf("Airtime of a missing interface: %v; want an error other than ErrNotWireless", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.TxBitrate("lo"); err == nil || errors.Is(err, ErrNotWireless) {
		t.Errorf("TxBitrate after Close: %v; want an error other than ErrNotWireless", err)
	}
	if _, err := r.Airtime("lo"); err == nil || errors.Is(err, ErrNotWireless) {
		t.Errorf("Airtime after Close: %v; want an error other than ErrNotWireless", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

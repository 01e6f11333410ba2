package linkspeed

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/coopcc/coopcc/internal/nettest"
)

func TestLayout(t *testing.T) {
	if s := unsafe.Sizeof(ethtoolCmd{}); s != 44 {
		t.Errorf("ethtool_cmd is %d bytes, want 44", s)
	}
	if s := unsafe.Sizeof(ifreqData{}); s != 40 {
		t.Errorf("ifreq is %d bytes, want 40", s)
	}
}

// A TAP's speed set through the handle is what the kernel reports back, in a
// namespace of its own (the handle is created there).
func TestSetGetOnTAP(t *testing.T) {
	nettest.RequireRoot(t)
	ns := nettest.NewNS(t, "lspd")
	ns.Exec(t, "ip", "tuntap", "add", "dev", "wl0", "mode", "tap")
	var h *Handle
	if err := ns.Do(func() (err error) { h, err = Open(); return err }); err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, mbps := range []uint32{54, 6, 433, 70000} {
		if err := h.Set("wl0", mbps); err != nil {
			t.Fatal(err)
		}
		got, err := h.Get("wl0")
		if err != nil || got != mbps {
			t.Fatalf("after Set(%d): Get = %d, %v", mbps, got, err)
		}
	}
	if err := h.Set("wl0", 0); err == nil {
		t.Error("Set(0) succeeded")
	}
	if _, err := h.Get("nosuchdev0"); err == nil || errors.Is(err, ErrNotSupported) {
		t.Errorf("Get of a missing device: %v, want a plain error", err)
	}
	if s, err := h.Get("lo"); !errors.Is(err, ErrNotSupported) || s != 0 {
		t.Errorf("Get(lo) = %d, %v; want 0, ErrNotSupported (loopback has no link settings)", s, err)
	}
}

package peer

import (
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The meter says "flood" above floodRate datagrams/s (checked per
// floodSpan, this span or the previous one) and not for honest traffic.
func TestFloodMeter(t *testing.T) {
	t0 := time.Unix(0, 0)
	var m floodMeter
	// 100 peers × 3.3 messages/s for 1 s, one datagram per drain.
	for i := 0; i < 330; i++ {
		if m.note(t0.Add(time.Duration(i)*time.Second/330), 1) {
			t.Fatalf("honest traffic taken for a flood at datagram %d", i)
		}
	}
	// 10,000/s in drains of 200 every 20 ms.
	var m2 floodMeter
	flood := false
	for i := 0; i < 10; i++ {
		flood = m2.note(t0.Add(time.Duration(i)*20*time.Millisecond), 200)
	}
	if !flood {
		t.Fatal("10,000 datagrams/s not taken for a flood")
	}
	// Quiet for two spans: no longer a flood.
	if m2.note(t0.Add(500*time.Millisecond), 1) {
		t.Fatal("still a flood after 300 ms of quiet")
	}
}

// Raw socket addresses convert without the kernel's help.
func TestSockaddrOf(t *testing.T) {
	var sa unix.RawSockaddrInet6
	sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(&sa))
	sa4.Family = unix.AF_INET
	sa4.Addr = [4]byte{10, 77, 231, 3}
	p := (*[2]byte)(unsafe.Pointer(&sa4.Port))
	p[0], p[1] = 0xc8, 0x64 // 51300
	if got := sockaddrOf(&sa); got != netip.MustParseAddrPort("10.77.231.3:51300") {
		t.Fatalf("IPv4: %v", got)
	}
	sa = unix.RawSockaddrInet6{Family: unix.AF_INET6, Scope_id: 7}
	sa.Addr = netip.MustParseAddr("fe80::1").As16()
	p = (*[2]byte)(unsafe.Pointer(&sa.Port))
	p[0], p[1] = 0xc8, 0x64
	if got := sockaddrOf(&sa); got != netip.MustParseAddrPort("[fe80::1%7]:51300") {
		t.Fatalf("IPv6: %v", got)
	}
}

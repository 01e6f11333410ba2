package testbed

import (
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/coopcc/coopcc/internal/nettest"
)

// udpFrame is an Ethernet + IPv4 (+ options) + UDP frame to dport.
func udpFrame(proto byte, ihl int, fragOff uint16, dport uint16) []byte {
	b := make([]byte, 14+ihl*4+8+16)
	binary.BigEndian.PutUint16(b[12:], 0x0800)
	ip := b[14:]
	ip[0] = 0x40 | byte(ihl)
	ip[9] = proto
	binary.BigEndian.PutUint16(ip[6:], fragOff)
	udp := ip[ihl*4:]
	binary.BigEndian.PutUint16(udp[0:], 40000)
	binary.BigEndian.PutUint16(udp[2:], dport)
	return b
}

// TestDropProgramVerdicts runs the filter program on crafted frames
// (BPF_PROG_TEST_RUN): only UDP to the port, first fragments, with or
// without IP options, is dropped, at the asked rate, and counted.
func TestDropProgramVerdicts(t *testing.T) {
	nettest.RequireRoot(t)
	run := func(p *ebpf.Program, frame []byte) int32 {
		t.Helper()
		ret, err := p.Run(&ebpf.RunOptions{Data: frame})
		if err != nil {
			t.Fatalf("test run (%d bytes): %v", len(frame), err)
		}
		return int32(ret)
	}
	prog, counts, err := newDropProgram(51300, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	defer counts.Close()
	f := &DropFilter{prog: prog, counts: counts}
	arp := udpFrame(17, 5, 0, 51300)
	binary.BigEndian.PutUint16(arp[12:], 0x0806)
	for _, c := range []struct {
		name  string
		frame []byte
		want  int32
	}{
		{"status", udpFrame(17, 5, 0, 51300), tcxDrop},
		{"status with IP options", udpFrame(17, 7, 0, 51300), tcxDrop},
		{"status, DF set", udpFrame(17, 5, 0x4000, 51300), tcxDrop},
		{"other port", udpFrame(17, 5, 0, 5201), tcxNext},
		{"TCP to the port", udpFrame(6, 5, 0, 51300), tcxNext},
		{"later fragment", udpFrame(17, 5, 0x0010, 51300), tcxNext},
		{"not IPv4", arp, tcxNext},
		{"truncated UDP header", udpFrame(17, 5, 0, 51300)[:36], tcxNext},
	} {
		if got := run(prog, c.frame); got != c.want {
			t.Errorf("%s: verdict %d, want %d", c.name, got, c.want)
		}
	}
	if m, d, err := f.Counts(); err != nil || m != 3 || d != 3 {
		t.Fatalf("counts matched %d dropped %d (%v), want 3 and 3", m, d, err)
	}

	// A fraction: 0.3 of 4000 datagrams, within 5 standard deviations.
	prog3, counts3, err := newDropProgram(51300, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	defer prog3.Close()
	defer counts3.Close()
	dropped := 0
	for range 4000 {
		if run(prog3, udpFrame(17, 5, 0, 51300)) == tcxDrop {
			dropped++
		}
	}
	if dropped < 1200-145 || dropped > 1200+145 {
		t.Fatalf("fraction 0.3 dropped %d of 4000", dropped)
	}
	if _, _, err := newDropProgram(51300, 0); err == nil || !strings.Contains(err.Error(), "want (0, 1]") {
		t.Fatalf("fraction 0: %v", err)
	}
}

// TestDropUDPOnLink: a filter on one end of a veth drops what that end
// receives (ingress) and leaves the other direction alone; closing it
// restores delivery.
func TestDropUDPOnLink(t *testing.T) {
	nettest.RequireRoot(t)
	a, b := nettest.NewNS(t, "tbdra"), nettest.NewNS(t, "tbdrb")
	la, lb := nettest.Veth(t, a, "10.77.233.1/24", b, "10.77.233.2/24")
	tb := &Testbed{}
	f, err := tb.DropUDP(Node{Name: "b", Netns: b.Name, Iface: lb.Dev}, 51300, true, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listen := func(ns *nettest.NS, addr string) *net.UDPConn {
		var c *net.UDPConn
		if err := ns.Do(func() error {
			var err error
			c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(addr), Port: 51300})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	ca, cb := listen(a, la.Addr), listen(b, lb.Addr)
	// A link just set up drops what it is given until the kernel's
	// linkwatch has attached its qdisc (the noop qdisc drops): one of the
	// 20 datagrams was lost so, now and then. Wait until a datagram to an
	// unfiltered port crosses, both ways, before counting.
	crossed := func(from, to nettest.Link, fromNS, toNS *nettest.NS) {
		t.Helper()
		var rx, tx *net.UDPConn
		if err := toNS.Do(func() error {
			var err error
			rx, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(to.Addr), Port: 51301})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		defer rx.Close()
		if err := fromNS.Do(func() error {
			var err error
			tx, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(from.Addr)})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		defer tx.Close()
		buf := make([]byte, 16)
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
			if _, err := tx.WriteToUDP([]byte("up?"), &net.UDPAddr{IP: net.ParseIP(to.Addr), Port: 51301}); err != nil {
				t.Fatal(err)
			}
			_ = rx.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			if _, _, err := rx.ReadFromUDP(buf); err == nil {
				return
			}
		}
		t.Fatalf("no datagram from %s reached %s in 5 s", from.Addr, to.Addr)
	}
	crossed(la, lb, a, b)
	crossed(lb, la, b, a)
	got := func(c *net.UDPConn) int {
		n := 0
		buf := make([]byte, 64)
		for {
			_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if _, _, err := c.ReadFromUDP(buf); err != nil {
				return n
			}
			n++
		}
	}
	for range 20 {
		if _, err := ca.WriteToUDP([]byte("status"), &net.UDPAddr{IP: net.ParseIP(lb.Addr), Port: 51300}); err != nil {
			t.Fatal(err)
		}
		if _, err := cb.WriteToUDP([]byte("status"), &net.UDPAddr{IP: net.ParseIP(la.Addr), Port: 51300}); err != nil {
			t.Fatal(err)
		}
	}
	if n := got(cb); n != 0 {
		t.Errorf("b received %d datagrams through an ingress filter of fraction 1", n)
	}
	if n := got(ca); n != 20 {
		t.Errorf("a received %d of b's 20 datagrams (egress of b is not filtered)", n)
	}
	if m, d, err := f.Counts(); err != nil || m != 20 || d != 20 {
		t.Errorf("counts %d/%d (%v), want 20/20", m, d, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		_, _ = ca.WriteToUDP([]byte("status"), &net.UDPAddr{IP: net.ParseIP(lb.Addr), Port: 51300})
	}
	if n := got(cb); n != 5 {
		t.Errorf("after Close b received %d of 5", n)
	}
}

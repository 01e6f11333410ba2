package monitor

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// capturedTCPInfo is struct tcp_info (280 bytes, Linux 6.18) of the sending
// end of a loopback connection after 300,000 bytes, taken with
// getsockopt(TCP_INFO), which returns the same struct as INET_DIAG_INFO.
const capturedTCPInfo = "010000000007aa00e01c03000000000000da000018020000000000000000000000000000000000000000000000000000000000000000000000000000ffff0000d7ff00004e0000005b000000ffffff7f12000000cbff00000300000000000000d7ff000000000000ae70663006000000ffffffffffffffffe19304000000000000000000000000000b00000006000000000000000600000000000000090000005515672a020000000000000000000000000000000000000000000000000000000a00000000000000e093040000000000000000000000000000000000000000000000000000b40100000001000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"

func TestParseCapturedTCPInfo(t *testing.T) {
	b, err := hex.DecodeString(capturedTCPInfo)
	if err != nil || len(b) != 280 {
		t.Fatalf("bad fixture: %v, %d bytes", err, len(b))
	}
	var f Flow
	parseTCPInfo(b, &f)
	want := Flow{
		MSS: 55808, SRTT: 78 * time.Microsecond, RTTVar: 91 * time.Microsecond,
		Ssthresh: 2147483647, Cwnd: 18, PacingRate: 26581823662, BytesAcked: 300001,
		MinRTT: 6 * time.Microsecond, DeliveryRate: 9301333333, Delivered: 10, BytesSent: 300000,
		SegsIn: 6, // the handshake's ACK and five more: no data came back
		// receive side: rcv_mss 536 before any data came in, loopback's 65495-byte initial space
		RcvMSS: 536, RcvSsthresh: 65495, RcvSpace: 65495, RcvWnd: 65536, SndWnd: 111616,
	}
	if f != want {
		t.Fatalf("parsed\n %+v\nwant\n %+v", f, want)
	}
}

// TestParseTCPInfoOffsets encodes x/sys/unix's TCPInfo (the kernel layout,
// generated from the uapi header) with a distinct value in every field and
// checks that each Flow field comes from the right offset.
func TestParseTCPInfoOffsets(t *testing.T) {
	ti := unix.TCPInfo{
		State: 1, Ca_state: 3, Retransmits: 2, Snd_mss: 1448, Unacked: 11, Sacked: 12, Lost: 13,
		Rtt: 21000, Rttvar: 22000, Snd_ssthresh: 31, Snd_cwnd: 32, Total_retrans: 41,
		Pacing_rate: 51, Bytes_acked: 52, Bytes_received: 53, Notsent_bytes: 61, Min_rtt: 20000,
		Delivery_rate: 71, Busy_time: 81, Rwnd_limited: 82, Sndbuf_limited: 83, Delivered: 91,
		Bytes_sent: 92, Segs_in: 62, Data_segs_in: 63,
	}
	// The in-memory layout (with alignment padding) is the kernel's.
	b := bytes.Clone(unsafe.Slice((*byte)(unsafe.Pointer(&ti)), unsafe.Sizeof(ti)))
	b[tiAppLimited] = 1 // the bitfield byte x/sys leaves as padding
	var f Flow
	parseTCPInfo(b, &f)
	want := Flow{
		CAState: 3, Retransmits: 2, AppLimited: true, MSS: 1448, Unacked: 11, Sacked: 12, Lost: 13,
		SRTT: 21 * time.Millisecond, RTTVar: 22 * time.Millisecond, Ssthresh: 31, Cwnd: 32,
		TotalRetrans: 41, PacingRate: 51, BytesAcked: 52, BytesReceived: 53, NotSent: 61,
		MinRTT: 20 * time.Millisecond, DeliveryRate: 71, BusyTime: 81 * time.Microsecond,
		RwndLimited: 82 * time.Microsecond, SndbufLimited: 83 * time.Microsecond, Delivered: 91,
		BytesSent: 92, SegsIn: 62, DataSegsIn: 63,
	}
	if f != want {
		t.Fatalf("parsed\n %+v\nwant\n %+v", f, want)
	}
}

// TestParseShortTCPInfo checks a reply from an old kernel (104 bytes, up to
// tcpi_total_retrans, as in Linux 3.x): later fields read as zero, no panic.
func TestParseShortTCPInfo(t *testing.T) {
	b, _ := hex.DecodeString(capturedTCPInfo)
	for _, n := range []int{0, 1, 7, 50, 104, 120, 163} {
		var f Flow
		parseTCPInfo(b[:n], &f)
		if n >= 104 && f.Cwnd != 18 {
			t.Errorf("len %d: cwnd %d, want 18", n, f.Cwnd)
		}
		if n < 128 && f.BytesAcked != 0 {
			t.Errorf("len %d: bytes_acked %d read past the end", n, f.BytesAcked)
		}
	}
}

func TestDecodeInetDiagMsg(t *testing.T) {
	ne := binary.NativeEndian
	info, _ := hex.DecodeString(capturedTCPInfo)
	msg := make([]byte, inetDiagMsgLen)
	msg[0], msg[1] = unix.AF_INET6, StateEstablished
	binary.BigEndian.PutUint16(msg[4:], 40000)
	binary.BigEndian.PutUint16(msg[6:], 5201)
	copy(msg[8:], netip.MustParseAddr("::ffff:10.77.1.1").AsSlice())
	copy(msg[24:], netip.MustParseAddr("::ffff:10.77.1.2").AsSlice())
	ne.PutUint32(msg[44:], 7)
	ne.PutUint32(msg[48:], 1)
	attr := func(typ uint16, v []byte) {
		a := make([]byte, 4+len(v))
		ne.PutUint16(a, uint16(len(a)))
		ne.PutUint16(a[2:], typ)
		copy(a[4:], v)
		for len(a)%4 != 0 {
			a = append(a, 0)
		}
		msg = append(msg, a...)
	}
	attr(inetDiagCong, []byte("cubic\x00"))
	attr(inetDiagInfo, info)
	skmem := make([]byte, 4*unix.SK_MEMINFO_VARS)
	ne.PutUint32(skmem[4*unix.SK_MEMINFO_WMEM_QUEUED:], 4096)
	attr(inetDiagSkmem, skmem)

	m := &Monitor{ccNames: map[string]string{}}
	m.ifaces.byAddr = map[netip.Addr]string{netip.MustParseAddr("10.77.1.1"): "veth0"}
	var f Flow
	if !m.decode(msg, &f) {
		t.Fatal("flow filtered out")
	}
	if f.Src.String() != "10.77.1.1:40000" || f.Dst.String() != "10.77.1.2:5201" || f.CC != "cubic" ||
		f.Cwnd != 18 || f.WmemQueued != 4096 || f.Cookie != 1<<32|7 || f.Iface != "veth0" || f.State != 1 {
		t.Fatalf("decoded %+v", f)
	}
	for _, tc := range []struct {
		flt  Filter
		keep bool
	}{
		{Filter{Port: 5201}, true},
		{Filter{Port: 40000}, true},
		{Filter{Port: 80}, false},
		{Filter{Src: netip.MustParsePrefix("10.77.1.0/24")}, true},
		{Filter{Dst: netip.MustParsePrefix("10.77.2.0/24")}, false},
		{Filter{Iface: "veth0"}, true},
		{Filter{Iface: "eth0"}, false},
	} {
		m.opts.Filter = tc.flt
		if got := m.decode(msg, &Flow{}); got != tc.keep {
			t.Errorf("filter %+v: kept %v, want %v", tc.flt, got, tc.keep)
		}
	}
	// A host talking to its own address is loopback.
	copy(msg[24:], netip.MustParseAddr("::ffff:10.77.1.1").AsSlice())
	m.opts.Filter = Filter{}
	if m.decode(msg, &Flow{}) {
		t.Error("flow to own address kept without IncludeLoopback")
	}
	m.opts.Filter.IncludeLoopback = true
	if !m.decode(msg, &Flow{}) {
		t.Error("flow to own address dropped with IncludeLoopback")
	}
	// A time-wait mini socket (a closed connection listed in FIN-WAIT-2)
	// comes without TCP info: no window, no counters, not a flow. The lab
	// recorded such rows as a last sample with bytes_acked 0 (2026-11-24).
	tw := append([]byte(nil), msg[:inetDiagMsgLen]...)
	tw[1] = StateFinWait2
	if m.decode(tw, &Flow{}) {
		t.Error("socket without TCP info (time-wait mini socket) kept as a flow")
	}
}

func TestCSVHeaderHasContractColumns(t *testing.T) {
	contract := "t_s,netns,src,dst,cc,cwnd,ssthresh,mss,srtt_us,rttvar_us,min_rtt_us,ca_state,retrans,total_retrans,lost,unacked,bytes_acked,delivery_rate_Bps,app_limited"
	if !strings.HasPrefix(CSVHeader(), contract) {
		t.Fatalf("header %q does not start with the contract's %q", CSVHeader(), contract)
	}
	var buf bytes.Buffer
	w := NewCSVWriter(&buf, "sta1")
	f := Flow{Src: netip.MustParseAddrPort("10.77.1.1:1"), Dst: netip.MustParseAddrPort("10.77.1.2:2"), CC: "cubic", Cwnd: 10, SRTT: 1500 * time.Microsecond, AppLimited: true}
	if err := w.Write(time.Unix(1, 500000000), []Flow{f, f}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(time.Unix(2, 0), []Flow{f}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 || lines[0] != CSVHeader() {
		t.Fatalf("got %q", buf.String())
	}
	if !strings.HasPrefix(lines[1], "1.500000,sta1,10.77.1.1:1,10.77.1.2:2,cubic,10,0,0,1500,0,0,0,0,0,0,0,0,0,1,") {
		t.Fatalf("row %q", lines[1])
	}
	if n, m := strings.Count(lines[1], ","), strings.Count(lines[0], ","); n != m {
		t.Fatalf("row has %d commas, header %d", n, m)
	}
}

func TestRateTracker(t *testing.T) {
	r := NewRateTracker()
	t0 := time.Unix(100, 0)
	if got := r.Update(t0, []Flow{{Cookie: 1, BytesAcked: 1000}}); got[0] != 0 {
		t.Fatalf("first sample rate %v, want 0", got[0])
	}
	got := r.Update(t0.Add(500*time.Millisecond), []Flow{{Cookie: 2, BytesAcked: 5}, {Cookie: 1, BytesAcked: 6000}})
	if got[0] != 0 || got[1] != 10000 {
		t.Fatalf("rates %v, want [0 10000]", got)
	}
}

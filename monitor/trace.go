package monitor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/cilium/ebpf/rlimit"
	"github.com/coopcc/coopcc/internal/ktime"
	"github.com/coopcc/coopcc/internal/nsenter"
	"golang.org/x/sys/unix"
)

// ACK is one tcp:tcp_probe event: the state of a socket's sender when a
// segment (on a sending socket: an ACK) reaches tcp_rcv_established, i.e.
// before the segment is processed — the same point the old tcp_probe
// module sampled.
type ACK struct {
	Time       time.Time
	Src, Dst   netip.AddrPort
	Cookie     uint64 // socket cookie (same as Flow.Cookie)
	Cwnd       uint32 // segments
	Ssthresh   uint32 // segments
	SRTT       time.Duration
	SndUna     uint32 // sequence numbers
	SndNxt     uint32
	RcvWnd     uint32 // bytes
	SndWnd     uint32 // bytes
	MSS        uint32 // bytes (mss_cache)
	PacketsOut uint32 // segments in flight (packets_out)
	BytesAcked uint64 // bytes
}

// ErrTracerClosed is returned by Tracer.Read after Close.
var ErrTracerClosed = errors.New("tracer closed")

// Tracer follows TCP flows ACK by ACK through the tcp:tcp_probe tracepoint
// with a BPF program (tp_btf) that copies the sender state into a ring
// buffer. Tracepoints are global: the program keeps only the events of the
// Options' network namespace (by netns cookie) and Filter.Port; Src, Dst and
// loopback are filtered in user space. Filter.Iface and Filter.States are
// not applied to traces.
type Tracer struct {
	opts    Options
	objs    tcpprobeObjects
	link    link.Link
	rd      *ringbuf.Reader
	rec     ringbuf.Record
	monoOff time.Duration // wall clock minus CLOCK_MONOTONIC

	closeOnce sync.Once
	closeErr  error
	mu        sync.Mutex
	closed    bool
	dropped   uint64 // final count, read at Close
}

// NewTracer loads and attaches the BPF program. It needs root
// (CAP_BPF + CAP_PERFMON) and a kernel with BTF (Linux 5.8+; SO_NETNS_COOKIE
// needs 5.14+).
func NewTracer(opts Options) (*Tracer, error) {
	var nsCookie uint64
	err := nsenter.Do(opts.Netns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open socket for the netns cookie: %w", err)
		}
		defer unix.Close(fd)
		c, err := unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_NETNS_COOKIE)
		if err != nil {
			return fmt.Errorf("get netns cookie (SO_NETNS_COOKIE, Linux 5.14+): %w", err)
		}
		nsCookie = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Kernels before 5.11 charge BPF maps to RLIMIT_MEMLOCK. Without the
	// privilege to raise it the load below fails with a clearer error.
	_ = rlimit.RemoveMemlock()
	t := &Tracer{opts: opts}
	if err := loadTcpprobeObjects(&t.objs, nil); err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("load tcp_probe BPF program: permission denied (run as root: needs CAP_BPF and CAP_PERFMON)")
		}
		return nil, fmt.Errorf("load tcp_probe BPF program (needs BTF at /sys/kernel/btf/vmlinux): %w", err)
	}
	cfg := tcpprobeConfig{NetnsCookie: nsCookie, Port: opts.Filter.Port}
	if err := t.objs.ConfigMap.Put(uint32(0), &cfg); err != nil {
		t.objs.Close()
		return nil, fmt.Errorf("write tracer config map: %w", err)
	}
	t.link, err = link.AttachTracing(link.TracingOptions{Program: t.objs.OnTcpProbe, AttachType: ebpf.AttachTraceRawTp})
	if err != nil {
		t.objs.Close()
		return nil, fmt.Errorf("attach to tracepoint tcp:tcp_probe: %w", err)
	}
	t.rd, err = ringbuf.NewReader(t.objs.Events)
	if err != nil {
		t.link.Close()
		t.objs.Close()
		return nil, fmt.Errorf("open ring buffer: %w", err)
	}
	mono, err := ktime.Now()
	if err != nil {
		t.Close()
		return nil, err
	}
	t.monoOff = time.Duration(time.Now().UnixNano() - int64(mono))
	return t, nil
}

// Read blocks until the next event that passes the filter and stores it in
// ev. After Close it returns ErrTracerClosed.
func (t *Tracer) Read(ev *ACK) error {
	for {
		if err := t.rd.ReadInto(&t.rec); err != nil {
			if errors.Is(err, ringbuf.ErrClosed) || errors.Is(err, os.ErrClosed) {
				return ErrTracerClosed
			}
			return fmt.Errorf("read ring buffer: %w", err)
		}
		if t.decode(t.rec.RawSample, ev) {
			return nil
		}
	}
}

// Event layout of struct event in bpf/tcpprobe.c.
const eventLen = 104

func (t *Tracer) decode(b []byte, ev *ACK) bool {
	if len(b) < eventLen {
		return false
	}
	ne := binary.NativeEndian
	var src, dst netip.Addr
	if ne.Uint16(b[60:]) == unix.AF_INET {
		src = netip.AddrFrom4([4]byte(b[24:28]))
		dst = netip.AddrFrom4([4]byte(b[40:44]))
	} else {
		src = netip.AddrFrom16([16]byte(b[24:40])).Unmap()
		dst = netip.AddrFrom16([16]byte(b[40:56])).Unmap()
	}
	flt := &t.opts.Filter
	if !flt.IncludeLoopback && (src.IsLoopback() || dst.IsLoopback() || src == dst) {
		return false
	}
	if (flt.Src.IsValid() && !flt.Src.Contains(src)) || (flt.Dst.IsValid() && !flt.Dst.Contains(dst)) {
		return false
	}
	*ev = ACK{
		Time:       time.Unix(0, int64(ne.Uint64(b[0:]))+int64(t.monoOff)),
		Cookie:     ne.Uint64(b[8:]),
		BytesAcked: ne.Uint64(b[16:]),
		Src:        netip.AddrPortFrom(src, ne.Uint16(b[56:])),
		Dst:        netip.AddrPortFrom(dst, ne.Uint16(b[58:])),
		Cwnd:       ne.Uint32(b[64:]),
		Ssthresh:   ne.Uint32(b[68:]),
		SRTT:       time.Duration(ne.Uint32(b[72:])) * time.Microsecond,
		SndUna:     ne.Uint32(b[76:]),
		SndNxt:     ne.Uint32(b[80:]),
		RcvWnd:     ne.Uint32(b[84:]),
		SndWnd:     ne.Uint32(b[88:]),
		MSS:        ne.Uint32(b[92:]),
		PacketsOut: ne.Uint32(b[96:]),
	}
	return true
}

// Dropped returns how many events the kernel dropped because the ring
// buffer (4 MiB) was full.
func (t *Tracer) Dropped() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return t.dropped
	}
	return t.readDropped()
}

func (t *Tracer) readDropped() uint64 {
	var n uint64
	if t.objs.Dropped == nil || t.objs.Dropped.Lookup(uint32(0), &n) != nil {
		return 0
	}
	return n
}

// Close detaches the program and frees the maps; a blocked Read returns.
// It may be called from any goroutine, more than once.
func (t *Tracer) Close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.dropped = t.readDropped()
		t.closed = true
		t.mu.Unlock()
		var errs []error
		if t.rd != nil {
			errs = append(errs, t.rd.Close())
		}
		if t.link != nil {
			errs = append(errs, t.link.Close())
		}
		errs = append(errs, t.objs.Close())
		t.closeErr = errors.Join(errs...)
	})
	return t.closeErr
}

// ACKHeader is the CSV header of a per-ACK trace: t_s is Unix time in
// seconds (nanosecond resolution), units are in the names (segments for
// cwnd, ssthresh, packets_out; sequence numbers for snd_una, snd_nxt).
const ACKHeader = "t_s,netns,src,dst,cookie,cwnd,ssthresh,srtt_us,snd_una,snd_nxt,rcv_wnd_bytes,snd_wnd_bytes,mss,packets_out,bytes_acked"

// ACKWriter writes per-ACK events as CSV (header ACKHeader) or, when
// created with jsonl, as JSON lines with the same keys.
type ACKWriter struct {
	w       io.Writer
	netns   string
	jsonl   bool
	buf     []byte
	started bool
}

// NewACKWriter returns a writer of trace events for netns.
func NewACKWriter(w io.Writer, netns string, jsonl bool) *ACKWriter {
	return &ACKWriter{w: w, netns: netns, jsonl: jsonl}
}

// Write writes one event.
func (a *ACKWriter) Write(ev *ACK) error {
	b := a.buf[:0]
	names := ackNames
	if !a.jsonl && !a.started {
		b = append(b, ACKHeader...)
		b = append(b, '\n')
	}
	a.started = true
	field := func(i int, str bool, v []byte) {
		if a.jsonl {
			if i == 0 {
				b = append(b, '{')
			} else {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, names[i]...)
			b = append(b, `":`...)
			if str {
				b = appendJSONString(b, string(v))
				return
			}
		} else if i > 0 {
			b = append(b, ',')
		}
		b = append(b, v...)
	}
	var tmp [64]byte
	field(0, false, strconv.AppendFloat(tmp[:0], float64(ev.Time.UnixNano())/1e9, 'f', 9, 64))
	field(1, true, []byte(a.netns))
	field(2, true, ev.Src.AppendTo(tmp[:0]))
	field(3, true, ev.Dst.AppendTo(tmp[:0]))
	for i, v := range [...]uint64{ev.Cookie, uint64(ev.Cwnd), uint64(ev.Ssthresh), uint64(ev.SRTT / time.Microsecond),
		uint64(ev.SndUna), uint64(ev.SndNxt), uint64(ev.RcvWnd), uint64(ev.SndWnd), uint64(ev.MSS),
		uint64(ev.PacketsOut), ev.BytesAcked} {
		field(4+i, false, strconv.AppendUint(tmp[:0], v, 10))
	}
	if a.jsonl {
		b = append(b, '}')
	}
	b = append(b, '\n')
	a.buf = b
	if _, err := a.w.Write(b); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	return nil
}

var ackNames = splitComma(ACKHeader)

func splitComma(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != ',' {
			i++
		}
		out = append(out, s[:i])
		if i == len(s) {
			break
		}
		s = s[i+1:]
	}
	return out
}

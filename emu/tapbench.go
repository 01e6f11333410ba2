package emu

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/coopcc/coopcc/emu/des"
	"github.com/coopcc/coopcc/internal/nsenter"
)

// The TAP benchmark puts every TAP in one scratch namespace. Frames are
// injected from a helper thread through AF_PACKET on the TAPs (as a sender's
// stack would transmit them), addressed so that the emulator's write into
// the destination TAP delivers them, through the kernel's IPv4 and UDP
// input, to a sink socket drained by another helper thread (helperThread
// gives their scheduling).
const (
	benchSinkIP   = "10.77.255.1"
	benchSinkPort = 9
)

// benchNS is a scratch network namespace for the TAP benchmark.
type benchNS struct{ name string }

// newBenchNS creates the namespace with its loopback up carrying the sink
// address, reverse-path filtering off and IPv6 off (no router solicitations).
func newBenchNS() (*benchNS, error) {
	ns := &benchNS{name: fmt.Sprintf("coopcc-bench-%d", os.Getpid())}
	steps := [][]string{
		{"ip", "netns", "add", ns.name},
		{"ip", "netns", "exec", ns.name, "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
			"net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"},
		{"ip", "-n", ns.name, "link", "set", "lo", "up"},
		{"ip", "-n", ns.name, "addr", "add", benchSinkIP + "/32", "dev", "lo"},
	}
	for i, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			if i > 0 {
				ns.remove()
			}
			return nil, fmt.Errorf("%s: %w: %s", strings.Join(s, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return ns, nil
}

// remove deletes the namespace.
func (ns *benchNS) remove() { _ = exec.Command("ip", "netns", "del", ns.name).Run() }

// benchFrame builds an Ethernet/IPv4/UDP frame of n bytes to the sink.
func benchFrame(dst, src net.HardwareAddr, srcIP [4]byte, n int) []byte {
	b := make([]byte, n)
	copy(b[0:6], dst)
	copy(b[6:12], src)
	binary.BigEndian.PutUint16(b[12:14], 0x0800)
	ip := b[14:34]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:4], uint16(n-14))
	ip[8], ip[9] = 64, unix.IPPROTO_UDP
	copy(ip[12:16], srcIP[:])
	copy(ip[16:20], net.ParseIP(benchSinkIP).To4())
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(ip[10:12], ^uint16(sum))
	udp := b[34:42]
	binary.BigEndian.PutUint16(udp[0:2], 40000)
	binary.BigEndian.PutUint16(udp[2:4], benchSinkPort)
	binary.BigEndian.PutUint16(udp[4:6], uint16(n-34))
	return b
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

// helperThread locks the goroutine to its thread and gives the thread
// ordinary scheduling, like real senders and receivers (fifo: SCHED_FIFO 1,
// below the emulator; not used by the benchmark, as on a shared machine it
// starves everybody else's ordinary processes).
func helperThread(fifo bool) {
	runtime.LockOSThread()
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}
	if fifo {
		attr = unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}
	}
	_ = unix.SchedSetAttr(0, &attr, 0)
}

// benchSink is a UDP socket in the namespace drained by a helper thread.
type benchSink struct {
	fd   int
	n    atomic.Uint64
	cpu  time.Duration
	done chan struct{}
}

// openSink binds the sink socket inside ns and starts draining it.
func openSink(ns string) (*benchSink, error) {
	s := &benchSink{fd: -1, done: make(chan struct{})}
	err := nsenter.Do(ns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("sink socket: %w", err)
		}
		s.fd = fd
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 64<<20)
		_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 100000})
		sa := &unix.SockaddrInet4{Port: benchSinkPort}
		copy(sa.Addr[:], net.ParseIP(benchSinkIP).To4())
		if err := unix.Bind(fd, sa); err != nil {
			return fmt.Errorf("bind sink: %w", err)
		}
		return nil
	})
	if err != nil {
		if s.fd >= 0 {
			unix.Close(s.fd)
		}
		return nil, err
	}
	return s, nil
}

// drain receives until stop is set (in a goroutine).
func (s *benchSink) drain(stop *atomic.Bool, fifo bool) {
	defer close(s.done)
	helperThread(fifo)
	defer runtime.UnlockOSThread()
	c0 := threadCPU()
	buf := make([]byte, 65536)
	for !stop.Load() {
		if n, _, err := unix.Recvfrom(s.fd, buf, 0); err == nil && n > 0 {
			s.n.Add(1)
		}
	}
	s.cpu = threadCPU() - c0
}

// benchInjector sends Poisson arrivals through AF_PACKET on the TAPs.
type benchInjector struct {
	fd     int
	up     [][]byte // per station: frame to the server, sent on its TAP
	down   [][]byte // per station: frame from the server, sent on the server's TAP
	staIdx []int    // ifindex of each station TAP
	srvIdx int
	sent   uint64
	errs   uint64
	cpu    time.Duration
	done   chan struct{}
}

// newInjector opens the packet socket in ns and prepares one frame per
// station and direction.
func newInjector(ns string, cfg Config, frame int) (*benchInjector, error) {
	in := &benchInjector{fd: -1, done: make(chan struct{})}
	srvMAC, _ := net.ParseMAC(cfg.Server.MAC)
	err := nsenter.Do(ns, func() error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("packet socket: %w", err)
		}
		in.fd = fd
		_ = unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1)
		ifc, err := net.InterfaceByName(cfg.Server.Iface)
		if err != nil {
			return fmt.Errorf("server tap: %w", err)
		}
		in.srvIdx = ifc.Index
		for i, s := range cfg.Stations {
			ifc, err := net.InterfaceByName(s.Iface)
			if err != nil {
				return fmt.Errorf("station tap: %w", err)
			}
			mac, _ := net.ParseMAC(s.MAC)
			ip := [4]byte{10, 77, byte(1 + i/250), byte(1 + i%250)}
			in.staIdx = append(in.staIdx, ifc.Index)
			in.up = append(in.up, benchFrame(srvMAC, mac, ip, frame))
			in.down = append(in.down, benchFrame(mac, srvMAC, [4]byte{10, 77, 0, 1}, frame))
		}
		return nil
	})
	if err != nil {
		if in.fd >= 0 {
			unix.Close(in.fd)
		}
		return nil, err
	}
	return in, nil
}

// run sends frames at pps (half up, half down) until stop (in a goroutine).
func (in *benchInjector) run(pps float64, seed uint64, stop *atomic.Bool, fifo bool) {
	defer close(in.done)
	helperThread(fifo)
	defer runtime.UnlockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	c0 := threadCPU()
	rng := rand.New(rand.NewPCG(seed, 7))
	start := time.Now()
	next := time.Duration(0)
	for !stop.Load() {
		if d := next - time.Since(start); d > 0 {
			ts := unix.NsecToTimespec(d.Nanoseconds())
			_ = unix.Nanosleep(&ts, nil)
			continue
		}
		i := rng.IntN(len(in.up))
		b, idx := in.up[i], in.staIdx[i]
		if rng.IntN(2) == 1 {
			b, idx = in.down[i], in.srvIdx
		}
		if err := unix.Sendto(in.fd, b, 0, &unix.SockaddrLinklayer{Ifindex: idx}); err != nil {
			in.errs++
		} else {
			in.sent++
		}
		next += time.Duration(rng.ExpFloat64() / pps * 1e9)
	}
	in.cpu = threadCPU() - c0
}

// tapBench runs the engine between TAPs in a scratch namespace.
func tapBench(o BenchOptions) (BenchResult, error) {
	ns, err := newBenchNS()
	if err != nil {
		return BenchResult{}, err
	}
	defer ns.remove()
	cfg := Config{PHY: o.PHY, Seed: o.Seed, RTPriority: o.Priority, Server: Endpoint{Netns: ns.name, Iface: "bsrv"}}
	if o.Priority <= 0 {
		cfg.RTPriority = -1
	}
	for i := 0; i < o.Stations; i++ {
		cfg.Stations = append(cfg.Stations, Station{Endpoint: Endpoint{Netns: ns.name, Iface: fmt.Sprintf("bsta%d", i+1)}})
	}
	if err := cfg.Normalize(); err != nil {
		return BenchResult{}, err
	}
	te, err := openTapEngine(cfg, EngineOptions{Inline: o.Inline, Writers: o.Writers, ThreadReads: o.ThreadReads, SpinDuty: o.SpinDuty})
	if err != nil {
		return BenchResult{}, err
	}
	defer te.close()
	sink, err := openSink(ns.name)
	if err != nil {
		return BenchResult{}, err
	}
	defer unix.Close(sink.fd)
	in, err := newInjector(ns.name, cfg, o.Frame)
	if err != nil {
		return BenchResult{}, err
	}
	defer unix.Close(in.fd)

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the helpers start once the loop has made the process SCHED_FIFO
		defer wg.Done()
		time.Sleep(50 * time.Millisecond)
		go sink.drain(&stop, false)
		in.run(o.PPS, o.Seed, &stop, false)
	}()
	go func() { time.Sleep(o.Duration + 50*time.Millisecond); stop.Store(true) }()
	cpu, runErr := processCPU(func() error {
		return te.run(context.Background(), des.Time(o.Duration+100*time.Millisecond))
	})
	stop.Store(true)
	wg.Wait()
	<-sink.done
	if runErr != nil {
		return BenchResult{}, runErr
	}
	rep := te.report()
	secs := o.Duration.Seconds()
	r := BenchResult{Opts: o, OfferedPPS: float64(in.sent) / secs, Delivered: float64(sink.n.Load()) / secs,
		EventsPerSec: float64(te.sim.Events()) / secs, P50: rep.LatenessUs["p50"], P99: rep.LatenessUs["p99"], MaxUs: rep.LatenessUs["max"],
		RTErr: te.rt.RTErr, Spin: te.rt.SpinNow, Report: &rep}
	r.DeliveryP99 = rep.DeliveryUs["p99"]
	r.CPU = (cpu - in.cpu - sink.cpu).Seconds() / secs
	r.LoopCPU = te.rt.CPU.Seconds() / secs
	if te.ws != nil {
		r.WriterCPU = te.ws.CPU.Seconds() / secs
	}
	r.HelperCPU = (in.cpu + sink.cpu).Seconds() / secs
	for i, d := range te.rt.PhaseTime {
		r.Phase[i] = d.Seconds() / secs
	}
	if te.rt.Reads > 0 {
		r.ReadUs = te.rt.PhaseTime[4].Seconds() * 1e6 / float64(te.rt.Reads)
	}
	if te.rt.Writes > 0 {
		r.WriteUs = te.rt.PhaseTime[1].Seconds() * 1e6 / float64(te.rt.Writes)
	}
	r.Valid = r.P99 < 100
	return r, nil
}

// TapLoopResult is the one-core cost of moving frames through TAPs with
// nothing else: per frame, an AF_PACKET send into TAP A (what a sender's
// stack does), a read from TAP A and a write into TAP B (which runs the
// receiving stack up to the UDP socket) on one thread.
type TapLoopResult struct {
	Frames                    uint64
	InjectNs, ReadNs, WriteNs float64 // mean per frame
	// LimitPPS is the frames/s one core sustains reading and writing
	// (1e9 / (read + write)), the ceiling of an emulator thread that does
	// both; WriteOnlyPPS is the ceiling of a thread that only writes.
	LimitPPS, WriteOnlyPPS float64
}

// TapLoop measures the physical limit of TAP I/O on this machine for d.
func TapLoop(frame int, d time.Duration, priority int) (TapLoopResult, error) {
	ns, err := newBenchNS()
	if err != nil {
		return TapLoopResult{}, err
	}
	defer ns.remove()
	macA, _ := net.ParseMAC("02:c0:0c:00:00:01")
	macB, _ := net.ParseMAC("02:c0:0c:00:00:02")
	a, err := OpenTAP(ns.name, "bloopa", macA, 1000)
	if err != nil {
		return TapLoopResult{}, err
	}
	defer a.Close()
	b, err := OpenTAP(ns.name, "bloopb", macB, 1000)
	if err != nil {
		return TapLoopResult{}, err
	}
	defer b.Close()
	cfg := Config{Server: Endpoint{Iface: "bloopa", MAC: macA.String()}, Stations: []Station{{Endpoint: Endpoint{Iface: "bloopb", MAC: macB.String()}}}}
	in, err := newInjector(ns.name, cfg, frame) // up[0]: a frame to B's MAC is down[0]
	if err != nil {
		return TapLoopResult{}, err
	}
	defer unix.Close(in.fd)
	sink, err := openSink(ns.name)
	if err != nil {
		return TapLoopResult{}, err
	}
	defer unix.Close(sink.fd)
	var stop atomic.Bool
	go sink.drain(&stop, false)
	defer func() { stop.Store(true); <-sink.done }()

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if priority > 0 {
		attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(priority)}
		if err := unix.SchedSetAttr(0, &attr, 0); err == nil {
			defer unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}, 0)
		}
	}
	f := in.down[0] // to B's MAC, from A's
	to := &unix.SockaddrLinklayer{Ifindex: in.srvIdx}
	buf := make([]byte, 65536)
	var r TapLoopResult
	var inj, rd, wr time.Duration
	start := time.Now()
	for time.Since(start) < d {
		t0 := time.Now()
		if err := unix.Sendto(in.fd, f, 0, to); err != nil {
			return r, fmt.Errorf("inject: %w", err)
		}
		t1 := time.Now()
		n, err := unix.Read(a.FD, buf)
		if err != nil {
			return r, fmt.Errorf("read tap: %w", err)
		}
		t2 := time.Now()
		if _, err := unix.Write(b.FD, buf[:n]); err != nil {
			return r, fmt.Errorf("write tap: %w", err)
		}
		t3 := time.Now()
		inj, rd, wr = inj+t1.Sub(t0), rd+t2.Sub(t1), wr+t3.Sub(t2)
		r.Frames++
	}
	k := float64(r.Frames)
	r.InjectNs, r.ReadNs, r.WriteNs = float64(inj)/k, float64(rd)/k, float64(wr)/k
	r.LimitPPS = 1e9 / (r.ReadNs + r.WriteNs)
	r.WriteOnlyPPS = 1e9 / r.WriteNs
	return r, nil
}

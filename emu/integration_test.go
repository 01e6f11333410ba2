package emu

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coopcc/coopcc/emu/bianchi"
	"github.com/coopcc/coopcc/internal/nettest"
)

// The integration tests run the emulator in a child process (this test
// binary re-executed with COOPCC_EMU_CHILD=config), exactly as the lab runs
// `coopcc emu run`: its threads go SCHED_FIFO, the test's iperf3 must not.
func TestMain(m *testing.M) {
	if os.Getenv("COOPCC_EMU_AS_CLI") != "" && len(os.Args) == 7 && os.Args[1] == "emu" && os.Args[2] == "run" {
		// Launched as `BIN emu run --config F --out D` (see Launch).
		os.Exit(emuChild(os.Args[4], os.Args[6]))
	}
	os.Exit(m.Run())
}

func emuChild(path, out string) int {
	cfg, err := LoadConfig(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := Run(ctx, cfg, out, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startEmu writes cfg and launches the emulator (this test binary acting as
// `coopcc emu run`) through Launch. stop (idempotent, also run at cleanup)
// ends it.
func startEmu(t *testing.T, cfg Config) (outDir string, stop func()) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "emu.toml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Encode(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	outDir = filepath.Join(dir, "out")
	t.Setenv("COOPCC_EMU_AS_CLI", "1")
	p, err := Launch(os.Args[0], path, outDir, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if _, err := p.Stop(10 * time.Second); err != nil {
				t.Errorf("stop emulator: %v", err)
			}
			if t.Failed() {
				t.Logf("emulator stderr: %s", p.Stderr())
			}
		})
	}
	t.Cleanup(stop)
	return outDir, stop
}

func readReport(t *testing.T, out string) Report {
	t.Helper()
	r, err := ReadReport(out)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type bss struct {
	srv  *nettest.NS
	stas []*nettest.NS
	cfg  Config
}

func newBSS(t *testing.T, n int, octet int) *bss {
	nettest.RequireRoot(t)
	b := &bss{srv: nettest.NewNS(t, "esrv")}
	b.cfg = Config{PHY: "g", Server: Endpoint{Netns: b.srv.Name}}
	for i := 0; i < n; i++ {
		ns := nettest.NewNS(t, fmt.Sprintf("esta%d", i+1))
		b.stas = append(b.stas, ns)
		b.cfg.Stations = append(b.cfg.Stations, Station{Endpoint: Endpoint{Netns: ns.Name}})
	}
	if err := b.cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *bss) address(t *testing.T, octet int) {
	b.srv.Exec(t, "ip", "addr", "add", fmt.Sprintf("10.77.%d.254/24", octet), "dev", "eth0")
	for i, ns := range b.stas {
		ns.Exec(t, "ip", "addr", "add", fmt.Sprintf("10.77.%d.%d/24", octet, i+1), "dev", "wlan0")
	}
}

func TestTwoStationUploadReachesModelCeiling(t *testing.T) {
	nettest.RequireTool(t, "iperf3")
	const octet = 143
	b := newBSS(t, 2, octet)
	out, stop := startEmu(t, b.cfg)
	b.address(t, octet)
	server := fmt.Sprintf("10.77.%d.254", octet)
	for _, ns := range b.stas {
		ns.Exec(t, "ping", "-c", "1", "-W", "2", server) // ARP, and the path works
	}
	// The endpoints run at nice -15: on the shared, overloaded test machine
	// ordinary processes can be starved of CPU for long enough to leave the
	// medium idle, and this test is about the medium, not the CPU share.
	niceIperf3Server(t, b.srv, 5301)
	niceIperf3Server(t, b.srv, 5302)
	const secs = 8
	upload := func() float64 {
		runs := []*exec.Cmd{
			niceIperf3Client(t, b.stas[0], server, 5301, secs),
			niceIperf3Client(t, b.stas[1], server, 5302, secs),
		}
		total := 0.0
		for i, r := range runs {
			err := r.Wait()
			js := r.Stdout.(*strings.Builder).String()
			if err != nil {
				t.Fatalf("iperf3 from sta%d: %v\n%s", i+1, err, js)
			}
			var res struct {
				End struct {
					SumReceived struct {
						BitsPerSecond float64 `json:"bits_per_second"`
					} `json:"sum_received"`
				} `json:"end"`
			}
			if err := json.Unmarshal([]byte(js), &res); err != nil {
				t.Fatalf("iperf3 JSON: %v", err)
			}
			t.Logf("sta%d goodput %.2f Mbps", i+1, res.End.SumReceived.BitsPerSecond/1e6)
			total += res.End.SumReceived.BitsPerSecond
		}
		return total
	}
	g, _ := b.cfg.Preset()
	// MSS 1448 (timestamps), 52 B IP+TCP headers, one delayed ACK per 2 segments.
	ceiling, err := bianchi.TCPUploadCeiling(g, 2, 1448, 52, 2)
	if err != nil {
		t.Fatal(err)
	}
	total := upload()
	t.Logf("aggregate %.2f Mbps, model ceiling %.2f Mbps (%.1f%%)", total/1e6, ceiling/1e6, 100*(total-ceiling)/ceiling)
	if d := (total - ceiling) / ceiling; d < -0.10 {
		// On the shared 2-core machine the senders (ordinary processes) can be
		// starved of CPU for seconds; one more try before calling it a failure.
		t.Logf("below the ceiling by more than 10%%: retrying once (machine load?)")
		total = upload()
		t.Logf("aggregate %.2f Mbps, model ceiling %.2f Mbps (%.1f%%)", total/1e6, ceiling/1e6, 100*(total-ceiling)/ceiling)
	}
	if d := (total - ceiling) / ceiling; d < -0.10 || d > 0.10 {
		t.Errorf("aggregate goodput %.2f Mbps is not within 10%% of the model's TCP ceiling %.2f Mbps", total/1e6, ceiling/1e6)
	}
	stop()
	rep := readReport(t, out)
	t.Logf("emulator: valid %v, lateness %v µs, events %d, overload drops %d, medium busy %.0f%% (%s), late by %v",
		rep.Valid, rep.LatenessUs, rep.Events, rep.OverloadDrops, 100*rep.BusyFraction, rep.Reason, rep.LateBy)
	csv, err := os.ReadFile(filepath.Join(out, "stations.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// The stations sent the data, the AP sent the ACKs, and the data dominated the air.
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "sta1,") || !strings.HasPrefix(lines[3], "ap,") {
		t.Fatalf("stations.csv:\n%s", csv)
	}
	if rep.UpBytes < uint64(total/8*secs*0.9) {
		t.Errorf("emulator counted %d bytes to the server, iperf3 %.0f", rep.UpBytes, total/8*secs)
	}
}

func TestBroadcastReachesStationsAndServer(t *testing.T) {
	const octet = 144
	b := newBSS(t, 3, octet)
	startEmu(t, b.cfg)
	b.address(t, octet)
	listen := func(ns *nettest.NS) net.PacketConn {
		var pc net.PacketConn
		if err := ns.Do(func() error {
			var err error
			pc, err = net.ListenPacket("udp4", ":47001")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pc.Close() })
		return pc
	}
	rx := []net.PacketConn{listen(b.stas[1]), listen(b.stas[2]), listen(b.srv)}
	self := listen(b.stas[0]) // the sender's own socket must not see its frame twice (no echo from the AP)
	var sender *net.UDPConn
	if err := b.stas[0].Do(func() error {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{})
		if err != nil {
			return err
		}
		sc, _ := c.SyscallConn()
		_ = sc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_BROADCAST, 1) })
		sender = c
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	defer sender.Close()
	dst := &net.UDPAddr{IP: net.IPv4(10, 77, octet, 255), Port: 47001}
	if _, err := sender.WriteTo([]byte("hello-bss"), dst); err != nil {
		t.Fatal(err)
	}
	for i, pc := range rx {
		_ = pc.SetReadDeadline(time.Now().Add(3 * time.Second))
		buf := make([]byte, 64)
		n, _, err := pc.ReadFrom(buf)
		if err != nil || string(buf[:n]) != "hello-bss" {
			t.Fatalf("receiver %d (sta2, sta3, server): %q %v", i, buf[:n], err)
		}
	}
	// The sender's host loops its own broadcast back locally once; a second copy
	// would mean the AP echoed it back to the originating station.
	_ = self.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	copies := 0
	for {
		buf := make([]byte, 64)
		if _, _, err := self.ReadFrom(buf); err != nil {
			break
		}
		copies++
	}
	if copies > 1 {
		t.Fatalf("sender saw its broadcast %d times: the AP echoed it back", copies)
	}
}

func niceIperf3Server(t *testing.T, ns *nettest.NS, port int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := ns.Command(ctx, "nice", "-n", "-15", "iperf3", "-s", "-p", fmt.Sprint(port))
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start iperf3 server: %v", err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(ns.Exec(t, "ss", "-Htln", fmt.Sprintf("sport = :%d", port)), "LISTEN") {
		if time.Now().After(deadline) {
			t.Fatalf("iperf3 server on port %d did not listen", port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func niceIperf3Client(t *testing.T, ns *nettest.NS, server string, port, secs int) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs+30)*time.Second)
	t.Cleanup(cancel)
	cmd := ns.Command(ctx, "nice", "-n", "-15", "iperf3", "-c", server, "-p", fmt.Sprint(port), "-t", fmt.Sprint(secs), "-J", "-C", "cubic", "-O", "1")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start iperf3 client: %v", err)
	}
	return cmd
}

func TestLaunchReportsAFailedStart(t *testing.T) {
	nettest.RequireSelfExec(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "emu.toml")
	if err := os.WriteFile(path, []byte("[[stations]]\nnetns = \"no-such-namespace-coopcc\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COOPCC_EMU_AS_CLI", "1")
	_, err := Launch(os.Args[0], path, filepath.Join(dir, "out"), 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "no-such-namespace-coopcc") {
		t.Fatalf("want an error naming the missing namespace, got %v", err)
	}
}

func TestMobilityOutageThroughTAPs(t *testing.T) {
	const octet = 145
	b := newBSS(t, 1, octet)
	trace := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(trace, []byte("time_s,rate_mbps,fer,associated\n0,54,0,true\n2,54,0,false\n4,24,0,true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.cfg.Stations[0].Mobility = trace
	start := time.Now()
	out, stop := startEmu(t, b.cfg)
	b.address(t, octet)
	server := fmt.Sprintf("10.77.%d.254", octet)
	ping := func() error {
		return b.stas[0].Command(context.Background(), "ping", "-c", "1", "-W", "1", server).Run()
	}
	if err := ping(); err != nil {
		t.Fatalf("ping before the outage: %v", err)
	}
	time.Sleep(time.Until(start.Add(2500 * time.Millisecond)))
	if err := ping(); err == nil {
		t.Fatalf("ping went through while the station was out of range")
	}
	time.Sleep(time.Until(start.Add(4500 * time.Millisecond)))
	if err := ping(); err != nil {
		t.Fatalf("ping after the station came back: %v", err)
	}
	stop()
	csv, err := os.ReadFile(filepath.Join(out, "stations.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(csv), "\n")
	if f := strings.Split(lines[1], ","); len(f) < 15 || f[14] == "0" {
		t.Fatalf("no frames counted as lost to the outage: %s", lines[1])
	}
}

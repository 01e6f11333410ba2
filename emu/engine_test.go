package emu

import (
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coopcc/coopcc/emu/des"
	"github.com/coopcc/coopcc/emu/wire"
)

type recPort struct {
	sim    *des.Sim
	frames [][]byte
	at     []des.Time
}

func (p *recPort) WriteFrame(b []byte) error {
	p.frames = append(p.frames, b)
	p.at = append(p.at, p.sim.Now())
	return nil
}

func frame(dst, src string, n int) []byte {
	b := make([]byte, n)
	d, _ := net.ParseMAC(dst)
	s, _ := net.ParseMAC(src)
	copy(b, d)
	copy(b[6:], s)
	return b
}

func testEngine(t *testing.T, cfg Config) (*Engine, []*recPort, *recPort) {
	t.Helper()
	sim := des.New()
	var ports []Port
	var recs []*recPort
	for range cfg.Stations {
		r := &recPort{sim: sim}
		recs = append(recs, r)
		ports = append(ports, r)
	}
	srv := &recPort{sim: sim}
	e, err := NewEngine(cfg, sim, ports, srv)
	if err != nil {
		t.Fatal(err)
	}
	return e, recs, srv
}

func TestEngineForwarding(t *testing.T) {
	cfg := Config{Stations: []Station{{}, {}, {ExtraDelayMs: 5}}, Wire: WireConfig{Up: wireCfg(10), Down: wireCfg(10)}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	e, sta, srv := testEngine(t, cfg)
	bcast := "ff:ff:ff:ff:ff:ff"
	s1, s2, s3, server := cfg.Stations[0].MAC, cfg.Stations[1].MAC, cfg.Stations[2].MAC, cfg.Server.MAC
	// A broadcast from sta1 reaches sta2, sta3 and the server, not sta1.
	e.FromStation(0, frame(bcast, s1, 100))
	e.Sim.RunUntil(100 * des.Millisecond)
	if len(sta[0].frames) != 0 || len(sta[1].frames) != 1 || len(sta[2].frames) != 1 || len(srv.frames) != 1 {
		t.Fatalf("broadcast: sta %d %d %d server %d", len(sta[0].frames), len(sta[1].frames), len(sta[2].frames), len(srv.frames))
	}
	// It cost airtime twice: the station's uplink and the AP's rebroadcast.
	if e.Stas[0].Stats.TxFrames != 1 || e.AP.Stats.TxFrames != 1 {
		t.Fatalf("airtime: sta1 tx %d ap tx %d", e.Stas[0].Stats.TxFrames, e.AP.Stats.TxFrames)
	}
	// Unicast station to station goes through the AP; to the server crosses the wire (10 ms).
	t0 := e.Sim.Now()
	e.FromStation(0, frame(s2, s1, 1000))
	e.FromStation(2, frame(server, s3, 1000))
	e.Sim.RunUntil(t0 + 100*des.Millisecond)
	if len(sta[1].frames) != 2 || len(srv.frames) != 2 {
		t.Fatalf("unicast: sta2 %d server %d", len(sta[1].frames), len(srv.frames))
	}
	if d := srv.at[1] - t0; d < 15*des.Millisecond || d > 17*des.Millisecond {
		t.Fatalf("sta3 -> server took %v ns, want 10 ms wire + 5 ms extra + airtime", d)
	}
	// Server -> sta3: wire, extra delay, AP queue, air.
	t1 := e.Sim.Now()
	e.FromServer(frame(s3, server, 1000))
	e.FromServer(frame("02:00:00:00:00:99", server, 1000)) // unknown: dropped
	e.Sim.RunUntil(t1 + 100*des.Millisecond)
	if len(sta[2].frames) != 2 || e.UnknownDrops != 1 {
		t.Fatalf("downlink: sta3 %d unknown drops %d", len(sta[2].frames), e.UnknownDrops)
	}
	dir := t.TempDir()
	var h Histogram
	h.Add(5 * des.Microsecond)
	if err := WriteStats(dir, e, NewReport(e, &h, Overload{}, e.Sim.Now())); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "stations.csv"))
	if !strings.HasPrefix(string(b), "station,airtime_s,airtime_share,attempts,collisions,retries,drops,tx_frames,tx_bytes,rx_frames,rx_bytes") || strings.Count(string(b), "\n") != 5 {
		t.Fatalf("stations.csv:\n%s", b)
	}
	var rep map[string]any
	b, _ = os.ReadFile(filepath.Join(dir, "emu.json"))
	if err := json.Unmarshal(b, &rep); err != nil || rep["valid"] != true {
		t.Fatalf("emu.json %s (%v)", b, err)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "apqueue.csv"))
	if !strings.HasPrefix(string(b), "t_s,frames,bytes,drops_total\n") || strings.Count(string(b), "\n") < 20 {
		t.Fatalf("apqueue.csv too short:\n%s", b)
	}
}

func wireCfg(delayMs float64) wire.Config { return wire.Config{DelayMs: delayMs} }

func TestMobilityDisassociates(t *testing.T) {
	cfg := Config{Stations: []Station{{Mobility: "drive"}}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	e, sta, srv := testEngine(t, cfg)
	send := func() {
		e.FromStation(0, frame(cfg.Server.MAC, cfg.Stations[0].MAC, 1500))
		e.FromServer(frame(cfg.Stations[0].MAC, cfg.Server.MAC, 1500))
	}
	e.Sim.RunUntil(60 * des.Second) // out of sight 48..88 s
	send()
	e.Sim.RunUntil(61 * des.Second)
	if len(sta[0].frames)+len(srv.frames) != 0 || e.AssocDrops[0] != 2 {
		t.Fatalf("while out of sight: delivered %d/%d, assoc drops %d", len(sta[0].frames), len(srv.frames), e.AssocDrops[0])
	}
	e.Sim.RunUntil(100 * des.Second)
	send()
	e.Sim.RunUntil(101 * des.Second)
	if len(sta[0].frames) != 1 || len(srv.frames) != 1 || e.Stas[0].RateMbps != 36 {
		t.Fatalf("back in sight: delivered %d/%d rate %g", len(sta[0].frames), len(srv.frames), e.Stas[0].RateMbps)
	}
	if _, err := ReadTrace(strings.NewReader("time_s,rate_mbps,fer,associated\n0,54,0.1,true\n5,24,2,true\n")); err == nil {
		t.Fatal("fer 2 accepted")
	}
}

// The engine defaults by PHY: inline for 802.11b/g, threaded for n/ac; an
// explicit choice stays; anything else is refused.
func TestConfigEngineDefault(t *testing.T) {
	for phy, want := range map[string]string{"g": "inline", "b": "inline", "n": "threaded", "ac": "threaded"} {
		c := Config{PHY: phy, Stations: []Station{{}}}
		if err := c.Normalize(); err != nil || c.Engine != want {
			t.Errorf("phy %s: engine %q (%v), want %s", phy, c.Engine, err, want)
		}
	}
	c := Config{PHY: "g", Engine: "threaded", Stations: []Station{{}}}
	if err := c.Normalize(); err != nil || c.Engine != "threaded" {
		t.Errorf("explicit threaded on g: %q %v", c.Engine, err)
	}
	if err := (&Config{Engine: "fast", Stations: []Station{{}}}).Normalize(); err == nil {
		t.Error("engine fast accepted")
	}
}

// medium.csv: one row per MediumInterval with the medium's busy share and
// each node's airtime share; a station that alone keeps its queue full has
// the busy medium to itself, and the medium is idle only in its DIFS and
// backoffs (802.11g, 1500 bytes at 54 Mbit/s: about 95 of every 390 µs).
func TestMediumSamples(t *testing.T) {
	cfg := Config{Stations: []Station{{}, {}}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	e, _, _ := testEngine(t, cfg)
	for range 500 {
		e.FromStation(0, frame(cfg.Server.MAC, cfg.Stations[0].MAC, 1500))
	}
	e.Sim.RunUntil(des.Second)
	dir := t.TempDir()
	var h Histogram
	if err := WriteStats(dir, e, NewReport(e, &h, Overload{}, e.Sim.Now())); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "medium.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if lines[0] != "t_s,busy_share,sta1_share,sta2_share,ap_share" || len(lines) < 9 || len(lines) > 11 {
		t.Fatalf("medium.csv: %d lines, header %q", len(lines), lines[0])
	}
	var t0, busy, sta1, sta2, ap float64
	if _, err := fmt.Sscanf(lines[2], "%g,%g,%g,%g,%g", &t0, &busy, &sta1, &sta2, &ap); err != nil {
		t.Fatalf("row %q: %v", lines[2], err)
	}
	if busy < 0.65 || busy > 0.8 || math.Abs(sta1-busy) > 0.01 || sta2 != 0 || ap != 0 {
		t.Errorf("second interval: busy %.3f, sta1 %.3f, sta2 %.3f, ap %.3f: want the busy medium all sta1's", busy, sta1, sta2, ap)
	}
}

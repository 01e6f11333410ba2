package emu

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coopcc/coopcc/emu/des"
)

// Rate control and the PER table are configured per station (and for the
// AP), survive a TOML round trip, and the per-rate histogram lands in
// rates.csv and emu.json.
func TestRateControlConfigAndHistogram(t *testing.T) {
	cfg := Config{AP: APConfig{RateControl: "arf"}, Stations: []Station{
		{RateControl: "minstrel", PER: map[string]float64{"54": 1, "48": 1}},
		{},
	}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := cfg.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "emu.toml")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := LoadConfig(path)
	if err != nil {
		t.Fatalf("round trip: %v\n%s", err, buf.String())
	}
	if back.Stations[0].RateControl != "minstrel" || back.Stations[0].PER["54"] != 1 || back.AP.RateControl != "arf" {
		t.Fatalf("round trip lost keys: %+v", back)
	}
	e, _, _ := testEngine(t, back)
	s1, srv := back.Stations[0].MAC, back.Server.MAC
	for i := 0; i < 2000; i++ { // 2 s of 1000 frames/s up from sta1, and down to it
		e.Sim.At(des.Time(i)*des.Millisecond, func() {
			e.FromStation(0, frame(srv, s1, 1000))
			e.FromServer(frame(s1, srv, 1000))
		})
	}
	e.Sim.RunUntil(3 * des.Second)
	if e.Stas[0].Stats.ByRate[54] == nil || e.Stas[0].Stats.ByRate[54].Successes != 0 {
		t.Fatalf("sta1 at 54 Mbps: %+v", e.Stas[0].Stats.ByRate[54])
	}
	if m := e.Stas[0].Stats.MeanRate(); m < 34 || m > 36 {
		t.Errorf("minstrel behind PER 1 at 48/54: mean delivered rate %.1f, want about 36", m)
	}
	if m := e.AP.Stats.MeanRate(); m >= 48 || m < 6 {
		t.Errorf("AP's ARF to sta1 must stay below 48: mean %.1f", m)
	}
	dir := t.TempDir()
	var h Histogram
	h.Add(5 * des.Microsecond)
	if err := WriteStats(dir, e, NewReport(e, &h, Overload{}, e.Sim.Now())); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "rates.csv"))
	if !strings.HasPrefix(string(b), "station,rate_control,rate_mbps,attempts,successes,frames,airtime_s\n") || !strings.Contains(string(b), "\nsta1,minstrel,36,") || !strings.Contains(string(b), "\nap,arf,") {
		t.Fatalf("rates.csv:\n%s", b)
	}
	var rep Report
	b, _ = os.ReadFile(filepath.Join(dir, "emu.json"))
	if err := json.Unmarshal(b, &rep); err != nil || rep.RateControl["sta2"] != "constant" || rep.MeanRateMbps["sta1"] < 34 {
		t.Fatalf("emu.json: %s (%v)", b, err)
	}
}

func TestRateControlConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{Stations: []Station{{RateControl: "onoe"}}},
		{AP: APConfig{RateControl: "x"}, Stations: []Station{{}}},
		{Stations: []Station{{PER: map[string]float64{"11": 0.1}}}}, // not an 802.11g rate
		{Stations: []Station{{PER: map[string]float64{"54": 1.5}}}},
	} {
		if err := c.Normalize(); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
}

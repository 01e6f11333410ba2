package lab

import (
	"net/netip"
	"strconv"
	"testing"

	"github.com/coopcc/coopcc/emu"
	"github.com/coopcc/coopcc/emu/des"
	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/lab/testbed"
)

type nullPort struct{}

func (nullPort) WriteFrame([]byte) error { return nil }

// fakeTestbed has the nodes of a testbed without creating anything.
func fakeTestbed(n int) *testbed.Testbed {
	tb := &testbed.Testbed{Prefix: "cclab-0-0"}
	for k := 1; k <= n; k++ {
		tb.Stations = append(tb.Stations, testbed.Node{Name: "sta" + strconv.Itoa(k), Netns: tb.Prefix + "-sta" + strconv.Itoa(k), Iface: "wlan0",
			Addr: netip.AddrFrom4([4]byte{10, 77, 200, byte(k)})})
	}
	tb.Server = testbed.Node{Name: "srv", Netns: tb.Prefix + "-srv", Iface: "eth0", Addr: netip.AddrFrom4([4]byte{10, 77, 200, 254})}
	return tb
}

// TestEmuConfigPresets builds the emulator's engine (no TAPs) from every
// run of every preset, so a name the emulator does not know (PHY, queue
// mode, mobility trace) fails here and not an hour into a sweep.
func TestEmuConfigPresets(t *testing.T) {
	ps, err := scenario.Presets()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ps {
		for _, quick := range []bool{false, true} {
			runs, err := s.Expand(scenario.Options{Quick: quick})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range runs {
				tb := fakeTestbed(len(r.Stations))
				cfg := emuConfig(r, tb)
				ports := make([]emu.Port, len(cfg.Stations))
				for i := range ports {
					ports[i] = nullPort{}
				}
				if _, err := emu.NewEngine(cfg, des.New(), ports, nullPort{}); err != nil {
					t.Errorf("%s %s: emulator rejects the config: %v", s.Name, r.ID, err)
				}
			}
		}
	}
}

func TestEmuConfigValues(t *testing.T) {
	s, err := scenario.Parse([]byte(`
name = "e"
modes = ["ap-priority"]
[wlan]
ap_queue_size = 50
neighbour_load = "8Mbps"
airtime_bss_rx = true
[wired]
delay = "256ms"
rate = "10Mbps"
extra_delay_step = "10ms"
[terminals]
count = 2
phy_mbps = 24
`))
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := s.Expand(scenario.Options{})
	cfg := emuConfig(runs[0], fakeTestbed(2))
	if cfg.PHY != "g" || cfg.AP.Queue != "priority" || cfg.AP.QueueFrames != 50 {
		t.Errorf("phy/ap: %+v %+v", cfg.PHY, cfg.AP)
	}
	if cfg.Neighbour.LoadMbps != 8 || !cfg.AirtimeBSSRx {
		t.Errorf("neighbour %+v, airtime_bss_rx %v: want 8 Mbit/s, true", cfg.Neighbour, cfg.AirtimeBSSRx)
	}
	// [interpretation] the scenario's delay is the round trip: half per direction.
	if cfg.Wire.Up.DelayMs != 128 || cfg.Wire.Down.DelayMs != 128 || cfg.Wire.Up.RateMbps != 10 {
		t.Errorf("wire: %+v", cfg.Wire)
	}
	if cfg.Stations[1].ExtraDelayMs != 5 || cfg.Stations[1].RateMbps != 24 || cfg.Stations[1].Netns != "cclab-0-0-sta2" || cfg.Server.Iface != "eth0" {
		t.Errorf("stations: %+v server %+v", cfg.Stations, cfg.Server)
	}
	other, _ := s.Expand(scenario.Options{})
	other[0].ID = "mode=x"
	if emuConfig(other[0], fakeTestbed(2)).Seed == cfg.Seed {
		t.Error("seed does not depend on the run id")
	}
}

// A testbed holds the largest run a scenario may expand to.
func TestTestbedHoldsEveryScenario(t *testing.T) {
	if testbed.MaxStations < scenario.MaxTerminals {
		t.Fatalf("testbed.MaxStations %d < scenario.MaxTerminals %d", testbed.MaxStations, scenario.MaxTerminals)
	}
}

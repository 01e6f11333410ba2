package phy

import (
	"testing"

	"github.com/coopcc/coopcc/emu/des"
)

func TestERPTimings(t *testing.T) {
	g, err := Lookup("g")
	if err != nil {
		t.Fatal(err)
	}
	if g.DIFS() != 28*des.Microsecond {
		t.Fatalf("DIFS %d", g.DIFS())
	}
	// 1500-byte IP packet: MPDU 1536 B -> 12310 bits / 216 = 57 symbols = 228 µs + 20 + 6.
	if d := g.DataTime(54, g.MPDUBytes(1500)); d != 254*des.Microsecond {
		t.Fatalf("data time %d ns, want 254 µs", d)
	}
	// ACK 14 B at 24 Mbps: 134 bits / 96 = 2 symbols = 8 µs + 20 + 6.
	if a := g.AckTime(); a != 34*des.Microsecond {
		t.Fatalf("ack time %d ns, want 34 µs", a)
	}
	// One saturated station: DIFS + mean backoff 7.5 slots + success -> 1460 B payload goodput 29.7 Mbps.
	cycle := float64(g.DIFS()+g.SuccessTime(g.DataTime(54, g.MPDUBytes(1500)))) + 7.5*float64(g.Slot)
	if mbps := 1460 * 8 / cycle * 1000; mbps < 29.6 || mbps > 29.8 {
		t.Fatalf("single-station goodput %.2f Mbps, DESIGN says ~29.7", mbps)
	}
}

func TestDSSSAndAggregates(t *testing.T) {
	b, _ := Lookup("b")
	// 1536 B at 11 Mbps: 192 + ceil(12288/11) = 192 + 1118 µs (rounded up to ns).
	if d := b.DataTime(11, 1536); d < 1309*des.Microsecond || d > 1311*des.Microsecond {
		t.Fatalf("802.11b data time %d", d)
	}
	ac, _ := Lookup("ac")
	one := ac.DataTime(0, ac.MPDUBytes(1500))
	ten := ac.DataTime(0, repeat(ac.MPDUBytes(1500), 10)...)
	if ten <= one || ten-ac.Preamble > 10*(one-ac.Preamble)+10*des.Microsecond {
		t.Fatalf("A-MPDU of 10 lasts %d, single %d", ten, one)
	}
	if ac.AckTime() != 32*des.Microsecond { // BlockAck 32 B at 24 Mbps, 5 GHz: 3 symbols + 20
		t.Fatalf("blockack %d", ac.AckTime())
	}
	for _, n := range []string{"802.11ac", "11ac", "AC", "802.11g"} {
		if _, err := Lookup(n); err != nil {
			t.Fatalf("Lookup(%q): %v", n, err)
		}
	}
	if _, err := Lookup("x"); err == nil {
		t.Fatal("unknown preset accepted")
	}
}

func repeat(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// Every OFDM rate of a preset must give a whole number of data bits per
// symbol (N_DBPS) once rounded as ofdmTime does (the nominal HT/VHT rates
// are rounded to 0.1 Mbps, so within 0.2 bit).
func TestRateSetsHaveWholeNDBPS(t *testing.T) {
	for name, p := range Presets() {
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		if p.Rates[len(p.Rates)-1] != p.DataRateMbps {
			t.Errorf("%s: top rate %v is not the default data rate %v", name, p.Rates[len(p.Rates)-1], p.DataRateMbps)
		}
		if p.Kind != OFDM {
			continue
		}
		for _, r := range p.Rates {
			x := r * float64(p.Symbol) / 1000
			if d := x - float64(int(x+0.5)); d > 0.2 || d < -0.2 {
				t.Errorf("%s: %v Mbps gives N_DBPS %.2f", name, r, x)
			}
		}
	}
	g, _ := Lookup("g")
	// 6 Mbps: N_DBPS 24; 1536 B MPDU -> (16+12288+6)/24 = 513 symbols = 2052 µs + 20 + 6.
	if d := g.DataTime(6, g.MPDUBytes(1500)); d != 2078*des.Microsecond {
		t.Fatalf("6 Mbps data time %d ns, want 2078 µs", d)
	}
}

package lab

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/coopcc/coopcc/monitor"
)

func flowTo(dst string, port uint16) monitor.Flow {
	return monitor.Flow{
		Src: netip.AddrPortFrom(netip.MustParseAddr("10.0.0.254"), port),
		Dst: netip.AddrPortFrom(netip.MustParseAddr(dst), 40000),
	}
}

// The server's flows go to the station their remote address names, in the
// order dumped; flows to addresses of no station are left out, and a batch
// of the previous tick does not leak into the next.
func TestSplitByStation(t *testing.T) {
	byAddr := map[netip.Addr]int{
		netip.MustParseAddr("10.0.0.1"): 0,
		netip.MustParseAddr("10.0.0.2"): 1,
		netip.MustParseAddr("10.0.0.3"): 2,
	}
	tick1 := []monitor.Flow{flowTo("10.0.0.2", 5201), flowTo("10.0.0.9", 22), flowTo("10.0.0.1", 5201), flowTo("10.0.0.2", 5202)}
	b := splitByStation(nil, tick1, byAddr)
	if len(b) != 3 {
		t.Fatalf("%d batches, want one per station (3)", len(b))
	}
	want := [][]uint16{{5201}, {5201, 5202}, {}}
	for i, ports := range want {
		if len(b[i]) != len(ports) {
			t.Fatalf("station %d: %d flows, want %d", i, len(b[i]), len(ports))
		}
		for k, p := range ports {
			if b[i][k].Src.Port() != p {
				t.Fatalf("station %d flow %d: port %d, want %d", i, k, b[i][k].Src.Port(), p)
			}
		}
	}
	b = splitByStation(b, []monitor.Flow{flowTo("10.0.0.3", 5203)}, byAddr)
	if len(b[0]) != 0 || len(b[1]) != 0 || len(b[2]) != 1 {
		t.Fatalf("second tick: batches of %d, %d, %d flows, want 0, 0, 1", len(b[0]), len(b[1]), len(b[2]))
	}
}

// Every station's writer drops the header its CSVWriter starts with, so a
// sink holds exactly one header whichever station writes first, and rows
// only after it.
func TestSinkHasOneHeader(t *testing.T) {
	var sink bytes.Buffer
	sink.WriteString(monitor.CSVHeader() + "\n")
	a := monitor.NewCSVWriter(&skipFirstLine{w: &sink}, "sta1")
	b := monitor.NewCSVWriter(&skipFirstLine{w: &sink}, "sta2")
	now := time.Unix(1, 0)
	for _, step := range []struct {
		w     *monitor.CSVWriter
		flows []monitor.Flow
	}{{b, nil}, {a, []monitor.Flow{flowTo("10.0.0.1", 1)}}, {b, []monitor.Flow{flowTo("10.0.0.2", 2)}}} {
		if err := step.w.Write(now, step.flows); err != nil {
			t.Fatal(err)
		}
	}
	lines := bytes.Split(bytes.TrimSuffix(sink.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != 3 {
		t.Fatalf("%d lines, want the header and 2 rows:\n%s", len(lines), sink.String())
	}
	if string(lines[0]) != monitor.CSVHeader() || bytes.HasPrefix(lines[1], []byte("t_s")) || bytes.HasPrefix(lines[2], []byte("t_s")) {
		t.Fatalf("want one header, first:\n%s", sink.String())
	}
}
